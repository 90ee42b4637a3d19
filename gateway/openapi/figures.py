"""The figures under /bench: each model's evidence (`GET /bench/models`: seats, verdicts, open
and blind, the interval routing ranks by, cooldowns, quotas) and a month's usage
(`GET /bench/usage`)."""

from __future__ import annotations

from gateway.openapi.common import Schema

_HEALTH: Schema = {
    "type": "string",
    "enum": ["ok", "benched", "retired"],
    "description": "benched: not seated until next_trial; retired: never seated (contract §18)",
}
_TEXT: Schema = {"type": ["string", "null"]}
_TIME: Schema = {"type": ["number", "null"], "description": "seconds since the epoch"}
_FAILURE: Schema = {"type": ["string", "null"], "description": "the last failure's class"}
BENCH_MODELS: Schema = {
    "type": "object",
    "required": ["models"],
    "properties": {
        "models": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "alias",
                    "connection",
                    "role",
                    "family",
                    "seated",
                    "answered",
                    "useful",
                    "judged",
                    "blind_useful",
                    "blind_judged",
                    "useful_interval",
                    "last_seated",
                    "cooling_until",
                    "cooling_why",
                    "rpd",
                    "used_today",
                    "health",
                    "health_why",
                    "health_since",
                    "next_trial",
                    "last_failure",
                    "listed",
                    "expires",
                    "free",
                    "suite",
                ],
                "properties": {
                    "useful": {"type": "integer", "description": "useful verdicts, every shape"},
                    "judged": {"type": "integer", "description": "verdicts, every shape"},
                    "blind_useful": {
                        "type": "integer",
                        "description": "of `useful`, those given blind (gateway.blind_judging)",
                    },
                    "blind_judged": {
                        "type": "integer",
                        "description": "of `judged`, those given blind; the rest are open",
                    },
                    "useful_interval": {
                        "type": "array",
                        "items": {"type": "number", "minimum": 0, "maximum": 1},
                        "minItems": 2,
                        "maxItems": 2,
                        "description": "[low, high]: Wilson's score interval of the useful "
                        "rate that routing ranks by (recent verdicts weigh more; [0, 1] "
                        "before any)",
                    },
                    "cooling_until": {"type": ["number", "null"]},
                    "cooling_why": {"type": ["string", "null"]},
                    "cooling_source": {
                        "type": ["string", "null"],
                        "description": "where the limit was learned: header <name>, body, "
                        "config (an rpd cap), default",
                    },
                    "rpm_used": {"type": ["integer", "null"]},
                    "rpd": {"type": ["integer", "null"], "description": "the configured rpd"},
                    "used_today": {
                        "type": "integer",
                        "description": "calls started today (gateway.quota_day_tz)",
                    },
                    "health": _HEALTH,
                    "health_why": _TEXT,
                    "health_since": _TIME,
                    "next_trial": _TIME,
                    "last_failure": _FAILURE,
                    "listed": {
                        "type": ["boolean", "null"],
                        "description": "named by its provider's listing; null where none is "
                        "read (contract §19)",
                    },
                    "expires": {
                        "type": ["string", "null"],
                        "description": "YYYY-MM-DD: the expiry its provider's listing states",
                    },
                    "free": {
                        "type": ["boolean", "null"],
                        "description": "priced zero by its provider's listing; null: unstated",
                    },
                    "suite": {
                        "type": "object",
                        "description": "the model's suite figures per shape (contract §20)",
                        "additionalProperties": {"$ref": "#/components/schemas/SuiteFigures"},
                    },
                },
            },
        }
    },
}

_USAGE_SUMS = {name: {"type": "integer"} for name in ("calls", "tokens_in", "tokens_out", "errors")}
BENCH_USAGE: Schema = {
    "type": "object",
    "required": ["month", "time_zone", "rows", "models", "totals"],
    "properties": {
        "month": {"type": "string", "description": "YYYY-MM"},
        "time_zone": {"type": "string"},
        "rows": {
            "type": "array",
            "description": "per day, model, connection and key",
            "items": {
                "type": "object",
                "required": ["day", "alias", "connection", "key", *_USAGE_SUMS],
                "properties": {
                    "day": {"type": "string", "description": "YYYY-MM-DD"},
                    "alias": {"type": "string"},
                    "connection": {"type": "string"},
                    "key": {"type": "string"},
                    **_USAGE_SUMS,
                },
            },
        },
        "models": {"type": "array", "items": {"type": "object", "properties": _USAGE_SUMS}},
        "totals": {"type": "object", "properties": _USAGE_SUMS},
    },
}


_MODEL_HEALTH: Schema = {
    "type": "object",
    "required": ["alias", "health", "why", "since", "next_trial", "last_failure"],
    "properties": {
        "alias": {"type": "string"},
        "health": _HEALTH,
        "why": _TEXT,
        "since": _TIME,
        "next_trial": _TIME,
        "last_failure": _FAILURE,
    },
}
BENCH_HEALTH: Schema = {
    "type": "object",
    "required": ["models", "connections", "actions"],
    "properties": {
        "models": {"type": "array", "items": _MODEL_HEALTH},
        "connections": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "health", "why", "since"],
                "properties": {
                    "name": {"type": "string"},
                    "health": {"type": "string", "enum": ["ok", "check_key", "down"]},
                    "why": _TEXT,
                    "since": _TIME,
                },
            },
        },
        "actions": {
            "type": "array",
            "items": {"type": "string"},
            "description": "what a person should do: a retired model still in a collection, "
            "a connection whose key was refused, a model whose key's variable is unset",
        },
    },
}
HEALTH_CHANGED: Schema = {
    "type": "object",
    "required": ["alias", "health", "health_why", "health_since", "next_trial", "last_failure"],
    "properties": {
        "alias": {"type": "string"},
        "health": _HEALTH,
        "health_why": _TEXT,
        "health_since": _TIME,
        "next_trial": _TIME,
        "last_failure": _FAILURE,
    },
}
RETIREMENT: Schema = {
    "type": "object",
    "required": ["why"],
    "properties": {"why": {"type": "string", "minLength": 1, "maxLength": 500}},
}

# (ModelList, from the OpenAI part, sits between the records and these in the description)
FIGURES: dict[str, Schema] = {
    "BenchModels": BENCH_MODELS,
    "BenchUsage": BENCH_USAGE,
    "BenchHealth": BENCH_HEALTH,
    "HealthChanged": HEALTH_CHANGED,
    "Retirement": RETIREMENT,
}

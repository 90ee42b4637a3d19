"""The figures under /bench: each model's evidence (`GET /bench/models`: seats, verdicts, open
and blind, the interval routing ranks by, cooldowns, quotas) and a month's usage
(`GET /bench/usage`)."""

from __future__ import annotations

from gateway.openapi.common import Schema

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


# (ModelList, from the OpenAI part, sits between the records and these in the description)
FIGURES: dict[str, Schema] = {"BenchModels": BENCH_MODELS, "BenchUsage": BENCH_USAGE}

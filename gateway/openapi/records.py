"""The records: verdicts, pending calls, panels, calls, conversations, models' figures and
usage, each under /bench, each reaching only the caller's own records when keys are on (the
figures' schemas: gateway/openapi/figures.py)."""

from __future__ import annotations

from typing import Any

from gateway.openapi.common import (
    NULLABLE_NUM,
    SEAT,
    Schema,
    json_reply,
    operation,
    query,
    ref,
)
from gateway.records.pending import MAX_CALLS
from gateway.records.usage import MONTH_PATTERN
from gateway.records.verdicts import MAX_CLAIM, MAX_CLAIMS, MAX_NOTE, VERDICTS_PER_MINUTE
from gateway.store.interface import CALL_FIELDS, PANEL_FIELDS
from gateway.store.statements import VERDICTS_KEPT

_CLAIM: Schema = {"type": "string", "maxLength": MAX_CLAIM}
VERDICT: Schema = {
    "type": "object",
    "description": (
        f"A note of at most {MAX_NOTE} characters; at most {MAX_CLAIMS} claims of at most "
        f"{MAX_CLAIM} characters in each of real and false (else 400, naming the field). A "
        f"call keeps its newest {VERDICTS_KEPT} verdicts; at most {VERDICTS_PER_MINUTE} "
        "verdicts a minute from each gateway key, else 429 with Retry-After."
    ),
    "required": ["call", "useful"],
    "additionalProperties": False,
    "properties": {
        "call": {"type": "string", "minLength": 1, "maxLength": 200},
        "useful": {"type": "boolean"},
        "note": {"type": ["string", "null"], "maxLength": MAX_NOTE},
        "real": {"type": ["array", "null"], "maxItems": MAX_CLAIMS, "items": _CLAIM},
        "false": {"type": ["array", "null"], "maxItems": MAX_CLAIMS, "items": _CLAIM},
    },
}

RECORDED: Schema = {
    "type": "object",
    "required": ["call", "recorded"],
    "properties": {"call": {"type": "string"}, "recorded": {"type": "boolean"}},
}

CURRENT_VERDICT: Schema = {
    "type": ["object", "null"],
    "description": "the call's current verdict (the newest of its history), or null",
    "required": ["useful", "note", "real", "false", "created", "blind"],
    "properties": {
        "useful": {"type": "boolean"},
        "note": {"type": ["string", "null"]},
        "real": {"type": ["array", "null"], "items": {"type": "string"}},
        "false": {"type": ["array", "null"], "items": {"type": "string"}},
        "created": {"type": "number"},
        "blind": {
            "type": "boolean",
            "description": "given on the dashboard with gateway.blind_judging, before the "
            "seat's model was shown (a later verdict keeping the same `useful` keeps it)",
        },
    },
}

CALL_RECORD: Schema = {
    "type": "object",
    "required": [*CALL_FIELDS, "collection", "verdict"],
    "properties": {
        "id": {"type": "string"},
        "panel_id": {"type": "string"},
        "status": SEAT["properties"]["status"],
        "seconds": NULLABLE_NUM,
        "first_token_s": NULLABLE_NUM,
        "verdict": CURRENT_VERDICT,
        "failure": SEAT["properties"]["failure"],
        "failed_over": {"type": ["array", "null"], "items": {"type": "object"}},
        "dropped": {"type": ["array", "null"], "items": {"type": "string"}},
        "caller": {
            "type": "string",
            "description": "who asked: the key's name (local without keys), or suite",
        },
    },
}
CONVERSATION_RECORD: Schema = {
    "type": "object",
    "description": "A route-mode conversation: its panel-like record and every turn's call.",
    "required": ["conversation", "collection", "key_name", "turns"],
    "properties": {
        "conversation": {"type": "string"},
        "turns": {"type": "array", "items": ref("CallRecord")},
    },
}

PANEL_RECORD: Schema = {
    "type": "object",
    "required": [*PANEL_FIELDS, "seats"],
    "properties": {
        "seats": {"type": "array", "items": {"type": "object"}},
        # JSON lists, written as lists (never JSON text inside a string); null on old rows
        "skipped": {"type": ["array", "null"], "items": {"type": "object"}},
        "notes": {"type": ["array", "null"], "items": {"type": "string"}},
        "reserves": {"type": ["array", "null"], "items": {"type": "string"}},
    },
}

_IDS: Schema = {"type": "array", "items": {"type": "string"}}
PENDING_REQUEST: Schema = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "calls": {
            "type": "array",
            "maxItems": MAX_CALLS,
            "items": {"type": "string", "minLength": 1, "maxLength": 200},
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    },
}
# Another key's call is `unknown`, in the same words as one that does not exist.
PENDING: Schema = {
    "type": "object",
    "required": ["pending"],
    "properties": {
        "pending": _IDS,
        "judged": _IDS,
        "unanswered": _IDS,
        "unknown": _IDS,
        "owed": {"type": "array", "items": {"type": "object"}},
    },
}
PANEL_PAGE: Schema = {
    "type": "object",
    "required": ["panels", "next", "owed", "owed_capped"],
    "properties": {
        "panels": {"type": "array", "items": ref("PanelRecord")},
        "next": {"type": ["string", "null"], "description": "`before` for the next page"},
        "owed": {"type": "integer", "description": "answered, unjudged seats (newest 2,000)"},
        "owed_capped": {"type": "boolean", "description": "older seats were not counted"},
    },
}


SCHEMAS: dict[str, Schema] = {
    "Verdict": VERDICT,
    "Recorded": RECORDED,
    "PendingRequest": PENDING_REQUEST,
    "Pending": PENDING,
    "CallRecord": CALL_RECORD,
    "PanelRecord": PANEL_RECORD,
    "ConversationRecord": CONVERSATION_RECORD,
    "PanelPage": PANEL_PAGE,
}

_ALIAS: Schema = {"name": "alias", "in": "path", "required": True, "schema": {"type": "string"}}
PATHS: dict[str, Any] = {
    "/bench/verdict": {
        "post": operation(
            "A verdict on a call",
            json_reply("Recorded", "recorded"),
            "Verdict",
            ("400", "401", "429"),
            mine=True,
        )
    },
    "/bench/pending": {
        "post": operation(
            "Which calls are answered and unjudged (without calls: the newest owed)",
            json_reply("Pending", "the calls sorted by verdict state"),
            "PendingRequest",
            ("400", "401"),
            body_required=False,
        )
    },
    "/bench/panels": {
        "get": {
            **operation(
                "Recent panels, newest first, with every seat",
                json_reply("PanelPage", "a page of panels"),
                errors=("400", "401", "404"),
                mine=True,
            ),
            "parameters": [
                query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
                query(
                    "before",
                    {"type": "string", "maxLength": 200},
                    "the `next` of the previous page",
                ),
                query("owed", {"type": "boolean"}, "only panels owing a verdict"),
            ],
        }
    },
    "/bench/panels/{panel}": {
        "get": {
            **operation(
                "A panel as recorded",
                json_reply("PanelRecord", "the panel"),
                errors=("401",),
                mine=True,
            ),
            "parameters": [
                {
                    "name": "panel",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            ],
        }
    },
    "/bench/calls/{call}": {
        "get": {
            **operation(
                "One seat's record",
                json_reply("CallRecord", "the call"),
                errors=("401",),
                mine=True,
            ),
            "parameters": [
                {
                    "name": "call",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            ],
        }
    },
    "/bench/conversations/{conversation}": {
        "get": {
            **operation(
                "A route conversation and its turns",
                json_reply("ConversationRecord", "the conversation"),
                errors=("401",),
                mine=True,
            ),
            "parameters": [
                {
                    "name": "conversation",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            ],
        }
    },
    "/bench/models": {
        "get": operation(
            "Every model's figures", json_reply("BenchModels", "the models"), errors=("401",)
        )
    },
    "/bench/health": {
        "get": operation(
            "Each model's and connection's health, and the actions a person should take",
            json_reply("BenchHealth", "the bench's health"),
            errors=("401",),
        )
    },
    "/bench/models/{alias}/retire": {
        "post": {
            **operation(
                "Retire a model by hand (the dashboard's admin): never seated until restored",
                json_reply("HealthChanged", "the model's health now"),
                "Retirement",
                ("400", "401", "404"),
            ),
            "parameters": [_ALIAS],
        }
    },
    "/bench/models/{alias}/restore": {
        "post": {
            **operation(
                "Restore a benched or retired model by hand (the dashboard's admin)",
                json_reply("HealthChanged", "the model's health now"),
                errors=("401", "404"),
            ),
            "parameters": [_ALIAS],
        }
    },
    "/bench/usage": {
        "get": {
            **operation(
                "Calls, tokens and errors per day, model, connection and key",
                json_reply("BenchUsage", "the month's usage (a key's own; local: all)"),
                errors=("400", "401"),
            ),
            "parameters": [
                {
                    "name": "month",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "pattern": MONTH_PATTERN},
                    "description": "YYYY-MM, from 1970-01 to 9998-12; none: this month",
                }
            ],
        }
    },
}

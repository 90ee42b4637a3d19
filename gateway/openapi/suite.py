"""The suite's routes (contract §20): `GET /bench/suite` and `POST /bench/suite/run`, and the
figures each model's row of `/bench/models` carries as `suite`."""

from __future__ import annotations

from typing import Any

from gateway.openapi.common import Schema, json_reply, operation, ref

_COUNT = {"type": "integer", "minimum": 0}
FIGURES: Schema = {
    "type": "object",
    "description": "one model's suite figures on one shape, scored from its saved answers",
    "required": [
        "found",
        "of",
        "wrong_line",
        "clean",
        "false_alarms",
        "claims_right",
        "claims_of",
        "confidently_wrong",
        "accuracy",
        "answered",
        "scored_at",
    ],  # fmt: skip
    "properties": {
        **{
            name: _COUNT
            for name in (
                "found",
                "of",
                "wrong_line",
                "clean",
                "false_alarms",
                "claims_right",
                "claims_of",
                "confidently_wrong",
                "answered",
            )  # fmt: skip
        },
        "accuracy": {
            "type": ["number", "null"],
            "description": "(found + clean + claims_right) / answered",
        },
        "scored_at": {"type": ["number", "null"], "description": "the newest answer counted"},
    },
}
BY_SHAPE: Schema = {
    "type": "object",
    "description": "shape -> figures",
    "additionalProperties": ref("SuiteFigures"),
}
_NAMES: Schema = {
    "type": "array",
    "minItems": 1,
    "maxItems": 500,
    "items": {"type": "string", "minLength": 1, "maxLength": 200},
}
RUN_REQUEST: Schema = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "models": {**_NAMES, "description": "aliases; none: every model"},
        "tasks": {**_NAMES, "description": "task ids; none: every task"},
        "quick": {"type": "boolean", "description": "the quick set (suite.quick tasks)"},
    },
}
RUN: Schema = {
    "type": "object",
    "required": [
        "id",
        "started",
        "finished",
        "state",
        "models",
        "tasks",
        "quick",
        "asked",
        "answered",
        "total",
        "notes",
    ],  # fmt: skip
    "properties": {
        "id": {"type": "string"},
        "started": {"type": "number"},
        "finished": {"type": ["number", "null"]},
        "state": {"enum": ["running", "done", "failed", "stopped"]},
        "models": {"type": "array", "items": {"type": "string"}},
        "tasks": {"type": "array", "items": {"type": "string"}},
        "quick": {"type": "boolean"},
        "asked": _COUNT,
        "answered": _COUNT,
        "total": _COUNT,
        "notes": {
            "type": "array",
            "items": {"type": "string"},
            "description": "what the run skipped and why (a model's share spent, benched)",
        },
    },
}
SUITE: Schema = {
    "type": "object",
    "required": ["running", "tasks", "runs", "models"],
    "properties": {
        "running": {"type": "boolean"},
        "tasks": {"type": "integer", "description": "tasks loaded"},
        "problems": {
            "type": "array",
            "items": {"type": "string"},
            "description": "task files skipped at start, each with its problem",
        },
        "runs": {"type": "array", "items": ref("SuiteRun"), "description": "newest first"},
        "models": {"type": "object", "additionalProperties": BY_SHAPE},
    },
}
SCHEMAS: dict[str, Schema] = {
    "SuiteFigures": FIGURES,
    "SuiteRunRequest": RUN_REQUEST,
    "SuiteRun": RUN,
    "Suite": SUITE,
}

_started: Schema = operation(
    "Start a suite run (the dashboard's admin); 404 for an unknown model or task, 409 while "
    "another runs",
    json_reply("SuiteStarted", "the run started"),
    "SuiteRunRequest",
    ("400", "401", "404"),
    body_required=False,
)
_started["responses"]["202"] = _started["responses"].pop("200")
_started["responses"]["409"] = json_reply("Error", "another suite run is going")
SCHEMAS["SuiteStarted"] = {
    "type": "object",
    "required": ["run"],
    "properties": {"run": {"type": "string"}},
}
SCHEMAS["SuiteDrafts"] = {
    "type": "object",
    "required": ["drafts"],
    "properties": {
        "drafts": {
            "type": "array",
            "description": "claims from verdicts waiting to be approved or rejected",
            "items": {
                "type": "object",
                "required": ["id", "call", "shape", "claim", "truth", "code"],
                "properties": {
                    "id": {"type": "string"},
                    "call": {"type": "string", "description": "the judged call"},
                    "shape": {"type": "string"},
                    "claim": {"type": "string"},
                    "truth": {"type": "boolean", "description": "real: true; false: false"},
                    "code": {"type": "string", "description": "the panel's prompt"},
                },
            },
        }
    },
}
SCHEMAS["DraftDecided"] = {
    "type": "object",
    "required": ["id", "state"],
    "properties": {"id": {"type": "string"}, "state": {"enum": ["approved", "rejected"]}},
}
_DRAFT = {"name": "draft", "in": "path", "required": True, "schema": {"type": "string"}}


def _decide(what: str) -> Schema:
    return {
        **operation(
            f"{what} a draft (the dashboard's admin)",
            json_reply("DraftDecided", "the draft's state now"),
            errors=("401", "404"),
        ),
        "parameters": [_DRAFT],
    }


PATHS: dict[str, Any] = {
    "/bench/suite": {
        "get": operation(
            "The suite: its tasks, runs and each model's figures per shape",
            json_reply("Suite", "the suite"),
            errors=("401",),
        )
    },
    "/bench/suite/run": {"post": _started},
    "/bench/suite/drafts": {
        "get": operation(
            "Draft claim tasks made from verdicts, waiting (the dashboard's admin)",
            json_reply("SuiteDrafts", "the drafts waiting"),
            errors=("401",),
        )
    },
    "/bench/suite/drafts/{draft}/approve": {"post": _decide("Approve: it runs like a task;")},
    "/bench/suite/drafts/{draft}/reject": {"post": _decide("Reject")},
}

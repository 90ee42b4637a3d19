"""`POST /bench/reload` (contract §19): its reply, and its refusal (409 `config_refused`)."""

from __future__ import annotations

from gateway.openapi.common import Schema, json_reply, operation

_NAMES: Schema = {"type": "array", "items": {"type": "string"}}

RELOADED: Schema = {
    "type": "object",
    "required": ["reloaded", "config", "added", "removed", "changed", "collections", "workers"],
    "properties": {
        "reloaded": {"type": "boolean", "const": True},
        "config": {"type": "string", "description": "the config file taken"},
        "added": {**_NAMES, "description": "models new in the config (each onboarded)"},
        "removed": _NAMES,
        "changed": {**_NAMES, "description": "models whose facts or litellm params changed"},
        "collections": {
            "type": "object",
            "required": ["added", "removed", "changed"],
            "properties": {"added": _NAMES, "removed": _NAMES, "changed": _NAMES},
        },
        "workers": {
            "type": "integer",
            "minimum": 1,
            "description": "the gateway's processes; with more than one, each is replaced in "
            "turn after this reply (the config was checked first)",
        },
    },
}

SCHEMAS: dict[str, Schema] = {"Reloaded": RELOADED}

_op = operation(
    "Take the config file again, as SIGHUP does (the dashboard's admin): what changed",
    json_reply("Reloaded", "the config was taken; what changed"),
    errors=("401",),
)
_op["responses"]["409"] = json_reply(
    "Error", "the config file is refused (as check-config would), or this gateway cannot reload"
)

PATHS: dict[str, Schema] = {"/bench/reload": {"post": _op}}

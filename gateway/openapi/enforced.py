"""What the server enforces that depends on its config, written into the description it serves.

Why: a fuzzer (schemathesis) reads `/openapi.json` and sends what it allows, expecting it to
be taken, and what it forbids, expecting a 4xx. A description looser than the server (a `model`
of any string, any alias in `with`) had schema-valid requests refused; one without security
had keyed routes answer 401 to requests it called valid. So, for the gateway's own config:
`model` is a collection's name; `with` and `X-Panel-With` name configured aliases,
`X-Panel-Shape` a configured shape (in any case); every operation has an `operationId`, the
statuses every route can give (413, 415, 431), and, when keys are required, its security; a
panel's reply links to its panel's and its calls' records, so the records are fuzzed with ids
that exist.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from gateway.config.settings import Config as Config  # (re-exported: describe()'s type)
from gateway.openapi.common import MODEL_PATTERN, PANEL_MODEL, Schema, json_reply

# a format that carries no tools has no route mode (legacy completions)
NO_ROUTE = {"CompletionRequest": PANEL_MODEL}
# routes any caller may use, keys or not; the dashboard's, which no gateway key opens (the admin
# token's session does)
OPEN = frozenset({"/healthz", "/openapi.json", "/api/version", "/", "/panels/{panel}"})
DASHBOARD = "/ui/"
GEMINI = ("/v1beta/", "/v1/models/{model}:")
_BODY_CODES = {"413": "the body is over the limit", "415": "the body is not JSON"}


def enforced(document: Schema, config: Config) -> Schema:
    described = copy.deepcopy(document)
    aliases = [m.alias for m in config.catalog.models]
    shapes = [name for name, _ in config.catalog.shapes]
    schemas = described["components"]["schemas"]
    for name, schema in schemas.items():
        _constrain(schema, aliases, NO_ROUTE.get(name, MODEL_PATTERN))
    keyed = config.gateway.require_keys
    if keyed:
        described["components"]["securitySchemes"].update(
            {
                "googleKey": {"type": "apiKey", "in": "header", "name": "x-goog-api-key"},
                "googleQuery": {"type": "apiKey", "in": "query", "name": "key"},
            }
        )
    for path, item in described["paths"].items():
        for method, op in item.items():
            op["operationId"] = _operation_id(method, path)
            error = _error_reply(op)
            op["responses"].setdefault("431", {**error, "description": "the head is too large"})
            if "requestBody" in op:
                for code, why in _BODY_CODES.items():
                    op["responses"].setdefault(code, {**error, "description": why})
                body = op["requestBody"]["content"]["application/json"]["schema"]
                _constrain(body, aliases, MODEL_PATTERN)
            for parameter in op.get("parameters", ()):
                _header(parameter, aliases, shapes)
                if path.startswith(GEMINI) and parameter.get("in") == "path":
                    # route mode (`<c>:route`) reads these bodies its own way: described as
                    # the panel's
                    parameter["schema"] = {"type": "string", "pattern": PANEL_MODEL}
            if keyed and path not in OPEN and not path.startswith(DASHBOARD):
                op["security"] = _security(path)
                op["responses"].setdefault("401", {**error, "description": "no valid key"})
    _link_records(described)
    return described


def _operation_id(method: str, path: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", path)
    return method + "".join(word[:1].upper() + word[1:] for word in words)


def _error_reply(op: Schema) -> Schema:
    """The shape this operation's errors take (its 400's, or OpenAI's)."""
    for code in ("400", "404", "401"):
        if code in op["responses"]:
            return dict(op["responses"][code])
    return json_reply("Error", "refused")


def _security(path: str) -> list[dict[str, list[str]]]:
    found: list[dict[str, list[str]]] = [{"bearer": []}, {"apiKey": []}]
    if path.startswith(GEMINI):
        found += [{"googleKey": []}, {"googleQuery": []}]
    return found


def _constrain(schema: Any, aliases: list[str], pattern: str) -> None:
    """`model` a collection's name, `with` configured aliases, wherever a body has them."""
    if not isinstance(schema, dict):
        return
    for branch in schema.get("anyOf", ()):  # a body read two ways (a panel's, a route turn's)
        _constrain(branch, aliases, pattern)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        model = properties.get("model")
        if isinstance(model, dict) and model.get("type") == "string":
            model.setdefault("pattern", pattern)  # a format may state its own (Ollama's)
        if "with" in properties:
            properties["with"] = {
                "type": ["array", "null"],
                "maxItems": 32,
                "items": {"enum": aliases},
                "description": "aliases to seat in explorer chairs",
            }


def _header(parameter: Schema, aliases: list[str], shapes: list[str]) -> None:
    name = parameter.get("name", "").lower()
    if parameter.get("in") != "header":
        return
    if name == "x-panel-shape":
        words = "|".join(_any_case(shape) for shape in shapes)
        parameter["schema"] = {"type": "string", "pattern": f"^({words})?$"}
        parameter["description"] = f"one of {', '.join(shapes)} (any case)"
    elif name == "x-panel-with":
        names = "|".join(re.escape(alias) for alias in aliases)
        part = f"[ ]*({names})?[ ]*"
        parameter["schema"] = {"type": "string", "pattern": f"^{part}(,{part})*$"}
        parameter["description"] = "comma-separated aliases"


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


def _link_records(described: Schema) -> None:
    """A panel's reply links to its records: the panel, and its first seat's call."""
    links = {
        "panel": {
            "operationId": "getBenchPanelsPanel",
            "parameters": {"panel": "$response.body#/bench/panel"},
        },
        "call": {
            "operationId": "getBenchCallsCall",
            "parameters": {"call": "$response.body#/bench/seats/0/call"},
        },
    }
    for path in ("/v1/chat/completions", "/v1/responses", "/v1/completions"):
        ok = described["paths"].get(path, {}).get("post", {}).get("responses", {}).get("200")
        if ok is not None:
            ok["links"] = copy.deepcopy(links)

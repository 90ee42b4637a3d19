"""Answers in the format a request asks for: `response_format` honoured, as a real model's is.

Why: a client that asks for JSON (LangChain's `with_structured_output`, the OpenAI SDK's `parse`)
cannot read a plain sentence, so against models that ignored `response_format` the demo's own
documented snippets failed. A simulated model keeps its words and shapes them: they fill every
string the schema asks for, and every other value is the plainest one its schema allows. An
answer that already is JSON is sent as it is (a test that scripts the exact JSON keeps it).
"""

from __future__ import annotations

import json
from typing import Any

JSON_KINDS = ("json_object", "json_schema")
MAX_DEPTH = 8  # a schema nested (or referring to itself) deeper than this ends in null


def shaped(answer: str, response_format: object) -> str:
    """*answer* as the JSON *response_format* asks for; as it is when no JSON is asked for."""
    if not isinstance(response_format, dict) or response_format.get("type") not in JSON_KINDS:
        return answer
    if not answer or _is_json(answer):
        return answer
    if response_format["type"] == "json_object":
        return json.dumps({"answer": answer})
    given = response_format.get("json_schema")
    schema = given.get("schema") if isinstance(given, dict) else None
    if not isinstance(schema, dict):
        return json.dumps({"answer": answer})
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    return json.dumps(_value(schema, answer, definitions, 0))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _value(schema: Any, words: str, definitions: dict[str, Any], depth: int) -> Any:
    """The plainest value *schema* allows, its strings *words*."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _value(definitions.get(ref.rsplit("/", 1)[-1]), words, definitions, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for either in ("anyOf", "oneOf", "allOf"):
        options = schema.get(either)
        if isinstance(options, list) and options:
            typed = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            return _value((typed or options)[0], words, definitions, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            name: _value(sub, words, definitions, depth + 1) for name, sub in properties.items()
        }
    if kind == "array":
        count = max(1, int(schema.get("minItems") or 1))
        return [_value(schema.get("items"), words, definitions, depth + 1)] * count
    if kind == "string":
        return words
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None

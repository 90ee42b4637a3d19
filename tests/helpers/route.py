"""The tool every route-mode test offers its members, and the call they make of it."""

from __future__ import annotations

WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


CALL = {"name": "weather", "arguments": {"city": "Oslo"}}

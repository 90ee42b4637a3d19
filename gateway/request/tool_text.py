"""An agent's earlier tool calls and results, as text a panel's seats read.

A panel answers in prose and offers its seats no tools (contract §11, "Tools on a panel"), but
an agent's one-shot question may carry the turns before it, tool calls and results included.
A chat model refuses a tool result for a call it was never offered the tool of, so each is
given to the seats as what it says: an assistant's calls as `[tool call name({...})]` after its
text, a result as a user message `[tool result: ...]`. Every reader converts its format's tool
turns to OpenAI chat's first; this is the one place they become text.
"""

from __future__ import annotations

import json
from typing import Any

from routing import content_text


def carries_tools(message: dict[str, Any]) -> bool:
    return (
        message.get("role") in ("tool", "function")
        or bool(message.get("tool_calls"))
        or bool(message.get("function_call"))
    )


def as_text(message: dict[str, Any]) -> dict[str, Any]:
    """A message that carries tool calls or a tool result, as a plain one."""
    if message.get("role") in ("tool", "function"):
        return {"role": "user", "content": result_line(content_text(message.get("content")))}
    calls = list(message.get("tool_calls") or ())
    if message.get("function_call"):
        calls.append({"function": message["function_call"]})
    lines = [content_text(message.get("content"))] if message.get("content") else []
    lines += [_call(call) for call in calls]
    return {"role": message.get("role") or "assistant", "content": "\n".join(lines)}


def _call(call: Any) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return "[tool call]"
    return call_line(function.get("name"), function.get("arguments"))


def call_line(name: Any, arguments: Any) -> str:
    """`[tool call name({...})]`; *arguments* a JSON string, or an object (Ollama, Gemini)."""
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
    return f"[tool call {name or 'tool'}({arguments})]"


def result_line(result: Any) -> str:
    """`[tool result: ...]`; *result* its text, or an object (Gemini's response)."""
    if not isinstance(result, str):
        result = json.dumps(result, ensure_ascii=False)
    return f"[tool result: {result}]"

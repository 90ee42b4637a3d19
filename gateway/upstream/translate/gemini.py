"""Gemini `generateContent` requests -> OpenAI chat, through litellm's `GoogleGenAIAdapter`.

Only the request half is used. The reply is rendered by gateway/formats/gemini/ from the
panel's own events (route_gemini.py from the member's), not by litellm's
`GoogleGenAIStreamWrapper`, which in 1.110.2 swallows an upstream exception (the stream just
ends, so a client would take a failure for a short answer) and drops a call's id.

Two habits of the adapter are corrected for route mode's function calls. It makes a tool call's
id from the function's name (`call_<name>`), so two calls of one function collide: the reader
gives each call and response its id (`call_ids`) and they replace the adapter's, in order. And
it puts a user content's text before its function responses, where OpenAI needs the tool
results right after the assistant's calls: they are moved ahead of that text.

The adapter keeps only the first part of a system instruction and drops any part or role it does
not know; the format's reader checks every part before calling it, and passes the system
instruction as one text part.
"""

from __future__ import annotations

import copy
from typing import Any, cast

import litellm
from litellm.google_genai.adapters import GoogleGenAIAdapter

litellm.suppress_debug_info = True  # an unknown model name would print a banner to stdout

# The adapter asks litellm whether the deployment takes `response_format`; the panel's seats
# are chosen later, so it is asked about a model that does, and each seat's call decides.
_ANY_OPENAI_MODEL = "openai/panel"
_ADAPTER = GoogleGenAIAdapter()


def to_chat(
    contents: list[dict[str, Any]],
    system: str | None,
    config: dict[str, Any] | None,
    *,
    tools: list[dict[str, Any]] | None = None,
    call_ids: tuple[list[str], list[str]] | None = None,
) -> dict[str, Any]:
    """`{"messages": [...], "temperature": ..., ...}` in OpenAI chat's shape, with `tools` when
    *tools* (Gemini's, `functionDeclarations`) are given. *call_ids*: the id of every
    functionCall part and of every functionResponse part, in the contents' order. The adapter
    is given copies: it normalises JSON schemas in place."""
    extra: dict[str, Any] = {}
    if system is not None:
        extra["systemInstruction"] = {"parts": [{"text": system}]}
    if tools:
        extra["tools"] = copy.deepcopy(tools)
    request = _ADAPTER.translate_generate_content_to_completion(
        model=_ANY_OPENAI_MODEL,
        contents=copy.deepcopy(contents),
        config=copy.deepcopy(config) if config else None,
        **extra,
    )
    request.pop("model", None)
    messages = [_plain(message) for message in request["messages"]]
    request["messages"] = messages if call_ids is None else _with_ids(messages, *call_ids)
    return request


def _with_ids(
    messages: list[dict[str, Any]], calls: list[str], responses: list[str]
) -> list[dict[str, Any]]:
    """The messages with the reader's call ids, each tool result right after the calls."""
    made = sum(len(m.get("tool_calls") or ()) for m in messages)
    answered = sum(m["role"] == "tool" for m in messages)
    if (made, answered) != (len(calls), len(responses)):  # the adapter dropped a part
        raise ValueError("a functionCall or functionResponse part could not be read")
    call_ids, response_ids = iter(calls), iter(responses)
    fixed: list[dict[str, Any]] = []
    for message in messages:
        if message.get("tool_calls"):
            message["tool_calls"] = [{**c, "id": next(call_ids)} for c in message["tool_calls"]]
        if message["role"] != "tool":
            fixed.append(message)
            continue
        message["tool_call_id"] = next(response_ids)
        at = len(fixed)
        while at and fixed[at - 1]["role"] == "user":  # the text of the content it came in
            at -= 1
        fixed.insert(at, message)
    return fixed


def _plain(message: Any) -> dict[str, Any]:
    """A message as a plain dict, an image part as OpenAI's `{"url": ...}` (the adapter adds a
    litellm-only `format` key; the data URL already names the type)."""
    message = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        parts = []
        for part in content:
            part = dict(part)
            if part.get("type") == "image_url":
                part["image_url"] = {"url": part["image_url"]["url"]}
            parts.append(part)
        message["content"] = parts
    return cast(dict[str, Any], message)

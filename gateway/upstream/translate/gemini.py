"""Gemini `generateContent` requests -> OpenAI chat, through litellm's `GoogleGenAIAdapter`.

Only the request half is used. The reply is rendered by gateway/formats/gemini.py from the
panel's own events, not by litellm's `GoogleGenAIStreamWrapper`, which in 1.110.2 swallows an
upstream exception (the stream just ends, so a client would take a failure for a short answer).
The adapter also makes a tool call's id from the function's name (`call_<name>`), so two calls
of one function collide; panels refuse tools, and route mode must make its own ids.

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
) -> dict[str, Any]:
    """`{"messages": [...], "temperature": ..., ...}` in OpenAI chat's shape. The adapter is
    given copies: it normalises JSON schemas in place."""
    extra: dict[str, Any] = {}
    if system is not None:
        extra["systemInstruction"] = {"parts": [{"text": system}]}
    request = _ADAPTER.translate_generate_content_to_completion(
        model=_ANY_OPENAI_MODEL,
        contents=copy.deepcopy(contents),
        config=copy.deepcopy(config) if config else None,
        **extra,
    )
    request.pop("model", None)
    request["messages"] = [_plain(message) for message in request["messages"]]
    return request


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

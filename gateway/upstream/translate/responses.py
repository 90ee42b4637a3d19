"""OpenAI Responses <-> chat, through litellm's `LiteLLMCompletionResponsesConfig`.

litellm reads a Responses `input` (a string or items) and `instructions` as chat messages, maps
`text.format` to a chat `response_format`, and writes a chat completion as a Responses object.
Corrected around it here: it is given a copy of the input (its translators have mutated their
argument in other versions), its output is plain JSON, and its ids (`chatcmpl-...` for the
response, a random uuid for the message) are replaced by the panel's `resp_...` / `msg_...`.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from litellm import stream_chunk_builder
from litellm.responses.litellm_completion_transformation.transformation import (
    LiteLLMCompletionResponsesConfig,
)

import gateway.upstream  # noqa: F401  (sets litellm.suppress_debug_info before any translator)
from gateway.upstream.translate.chat import litellm_chunk

# the litellm these translators are pinned to (tests/upstream/test_translate.py)
VERSION = "1.110.2"

_Config = LiteLLMCompletionResponsesConfig

# Request fields litellm echoes into the Responses object.
ECHOED = ("instructions", "max_output_tokens", "metadata", "reasoning", "temperature", "text",
          "top_p", "truncation", "user")  # fmt: skip


class Unreadable(ValueError):
    """litellm could not read the input (the reader has already refused what it knows)."""


def messages_of(input_: str | list[Any], instructions: str | None) -> list[dict[str, Any]]:
    """The Responses input (and instructions, as the system message) as chat messages."""
    request = {"instructions": instructions} if instructions else {}
    try:
        messages = _Config.transform_responses_api_input_to_messages(
            input=copy.deepcopy(input_), responses_api_request=request
        )
    except Exception as exc:  # litellm's own errors for input it cannot read: the client's fault
        raise Unreadable(str(exc) or type(exc).__name__) from None
    return [_plain(m) for m in messages]


def response_format_of(text: dict[str, Any]) -> dict[str, Any] | None:
    """`text.format` as a chat `response_format` (None for plain text)."""
    return _Config._transform_text_format_to_response_format(text)


def response_of(
    chat: dict[str, Any], request: dict[str, Any], response_id: str, message_id: str
) -> dict[str, Any]:
    """A chat completion (dict) as a Responses object, with the gateway's ids."""
    echoed = {k: request[k] for k in ECHOED if request.get(k) is not None}
    response = _Config.transform_chat_completion_response_to_responses_api_response(
        request_input=copy.deepcopy(request.get("input", "")),
        responses_api_request=cast(Any, {**echoed, "store": False}),  # litellm: a TypedDict
        chat_completion_response=chat,
    )
    body = response.model_dump(mode="json", exclude_none=False)
    body["id"] = response_id
    body["store"] = False
    body["text"] = body.get("text") or {"format": {"type": "text"}}
    for item in body["output"]:
        if item.get("type") == "message":
            item["id"] = message_id
            item.pop("phase", None)
    usage = body.get("usage") or {}
    usage.pop("cost", None)
    usage["input_tokens_details"] = usage.get("input_tokens_details") or {"cached_tokens": 0}
    usage["output_tokens_details"] = usage.get("output_tokens_details") or {"reasoning_tokens": 0}
    body["usage"] = usage
    return body


def _plain(message: Any) -> dict[str, Any]:
    if hasattr(message, "model_dump"):
        return cast(dict[str, Any], message.model_dump(exclude_none=True))
    return dict(message)


def assembled(chunks: list[Any]) -> dict[str, Any]:
    """A member's streamed chat chunks as one chat completion (litellm's own assembler), for a
    route turn that Responses renders whole."""
    whole = stream_chunk_builder([litellm_chunk(chunk) for chunk in chunks])
    if whole is None:
        raise ValueError("the member's reply could not be assembled")
    return cast(dict[str, Any], whole.model_dump())

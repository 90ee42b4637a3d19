"""Anthropic Messages requests in OpenAI's chat shape, through litellm's adapter.

litellm 1.110.2's `LiteLLMAnthropicMessagesAdapter.translate_anthropic_to_openai` turns
`system`, `messages` (text, image, tool_use and tool_result blocks), `metadata.user_id`,
`stop_sequences` and `thinking` into OpenAI chat kwargs. Two of its habits are corrected here:
it mutates the request it is given (so it gets a copy, never the caller's body), and it drops
`tool_result.is_error` unless built with `keep_tool_errors=True`. It also drops, silently, the
blocks it does not know: the format's reader refuses those before they get here.

(Python imports `gateway.upstream`, the seam that makes litellm offline and quiet, before this
module, so litellm is never first imported from here.)
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

from litellm.llms.anthropic.messages.adapters.streaming_iterator import AnthropicStreamWrapper
from litellm.llms.anthropic.messages.adapters.transformation import (
    LiteLLMAnthropicMessagesAdapter,
)

from gateway.upstream.translate.chat import litellm_chunk

# Stateless but for its two flags, so one serves every request.
_ADAPTER = LiteLLMAnthropicMessagesAdapter(keep_tool_errors=True)


def to_openai_chat(request: Mapping[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages request as OpenAI chat kwargs (`messages`, `stop`, `user`,
    `reasoning_effort`, and the fields that need no translation, copied as they are)."""
    # litellm types the request as its own TypedDict; a plain dict of its fields is what it reads
    translated, _tool_names = _ADAPTER.translate_anthropic_to_openai(
        cast(Any, copy.deepcopy(dict(request)))
    )
    return dict(translated)


def message_of(response: Any) -> dict[str, Any]:
    """A chat completion (litellm's ModelResponse) as an Anthropic `message`: text and tool_use
    blocks, stop reason, usage (route mode's reply)."""
    message = _ADAPTER.translate_openai_response_to_anthropic(response=response)
    if hasattr(message, "model_dump"):
        return dict(cast(Any, message).model_dump(exclude_none=True))
    return cast(dict[str, Any], json.loads(json.dumps(message, default=_plain)))


def events_of(chunks: AsyncIterator[Any], model: str) -> AsyncIterator[dict[str, Any]]:
    """Chat completion chunks as Anthropic stream events (`message_start` ... `message_stop`,
    tool_use blocks with `input_json_delta`), through litellm's stream wrapper."""
    # litellm's `_ChunkStream` asks for `__iter__` too, though the wrapper only iterates async
    return AnthropicStreamWrapper(
        completion_stream=_as_litellm(chunks),  # type: ignore[arg-type]
        model=model,
    )


async def _as_litellm(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The chunks as litellm's own objects, which its wrapper reads (a direct reader's are
    made into them here)."""
    try:
        async for chunk in chunks:
            yield litellm_chunk(chunk)
    finally:  # closed early (the client left): the turn's own stream is closed with it
        closing = getattr(chunks, "aclose", None)
        if closing is not None:
            await closing()


def _plain(value: Any) -> Any:
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else str(value)

"""A route turn's chat chunks and plain reply as litellm's own objects, for the formats whose
adapters are litellm's (Anthropic's stream wrapper and message, Responses' assembler) and for
chat's plain reply, rendered as litellm renders one."""

from __future__ import annotations

from typing import Any

import litellm

from gateway.upstream.chunks import Chunk, Usage


def litellm_chunk(chunk: Chunk) -> litellm.ModelResponseStream:
    """*chunk* as litellm's object, for an adapter that needs it."""
    return litellm.ModelResponseStream(**chunk.model_dump())


def whole_response(
    first: Chunk | None,
    text: str,
    reasoning: str,
    calls: list[dict[str, Any]],
    finish_reason: str | None,
    usage: Usage | None,
) -> litellm.ModelResponse:
    """A plain reply, as litellm would have returned it, from a streamed one's parts (route
    mode reads every member as a stream; *first*: its first chunk, for the id and time)."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ]
    if reasoning:
        message["reasoning_content"] = reasoning
    finish = finish_reason or ("tool_calls" if calls else "stop")
    return litellm.ModelResponse(
        id=first.id if first is not None else None,
        created=first.created if first is not None else None,
        model=first.model if first is not None else None,
        choices=[{"index": 0, "message": message, "finish_reason": finish}],
        usage=usage.model_dump() if usage is not None else None,
    )

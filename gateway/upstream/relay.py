"""Route mode's way to a model: one call whose reply is relayed, not summarised.

A panel seat needs only its answer's text (gateway/upstream/seam.py); a route turn passes the
model's reply on to an agent whole: tool calls, finish reason, usage, every streamed chunk as it
comes. So this opens the call and hands back litellm's own objects, plain or streamed, with
litellm's failures classified by the same `classify` as every seat (so a 429 cools the model the
same way). No retries at either level: the turn's failover is the gateway's, never litellm's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import litellm

from gateway.errors import (
    UpstreamAnswerTooLarge,
    UpstreamBrokenStream,
    UpstreamError,
    UpstreamFailed,
    UpstreamTimeout,
)
from gateway.upstream.capped import capped, raw_cap, too_large_in
from gateway.upstream.chunks import Usage
from gateway.upstream.direct import DirectReader
from gateway.upstream.failures import classify, short
from gateway.upstream.sse_reader import DirectStream


def max_output_of(served: str) -> int | None:
    """The model's known maximum output tokens (litellm's model map), or None when unknown."""
    info = litellm.model_cost.get(served) or {}
    value = info.get("max_output_tokens") or info.get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None


# A route turn's reply as litellm opens it: the whole response, or (streamed) its chunk stream;
# or a stream the direct reader opened (gateway/upstream/sse_reader.py).
TurnReply = litellm.ModelResponse | litellm.CustomStreamWrapper | DirectStream


async def open_turn(
    params: dict[str, Any],
    request: dict[str, Any],
    timeout: float,
    *,
    stream: bool,
    max_answer_bytes: int | None = None,
    direct: DirectReader | None = None,
) -> TurnReply:
    """The model's reply: a litellm `ModelResponse`, or (streamed) its chunk iterator, opened
    (the request is sent and the reply's headers are in). Raises an UpstreamError. With
    *max_answer_bytes*, a response read through a `CappedResponse` session stops being read
    once its raw bytes pass what an answer that long could take (the text itself is held to
    the limit by its reader). *direct*: a streamed turn sent and read by that reader."""
    kwargs = {**request, **params, "timeout": timeout, "num_retries": 0, "max_retries": 0}
    if stream:
        kwargs.update(stream=True, stream_options={"include_usage": True})
    limit = max_answer_bytes
    guard = capped(raw_cap(limit, stream), limit) if limit else contextlib.nullcontext()
    try:
        async with asyncio.timeout(timeout + 1.0):
            with guard:
                if direct is not None and stream:
                    messages = request.get("messages") or []
                    asked = {k: v for k, v in request.items() if k != "messages"}
                    return await direct.stream(params, messages, asked, timeout)
                reply: TurnReply = await litellm.acompletion(**kwargs)
            return reply
    except TimeoutError as exc:
        raise UpstreamTimeout(f"no answer within {timeout:g} s") from exc
    except Exception as exc:
        if (over := too_large_in(exc)) is not None:
            raise UpstreamAnswerTooLarge(str(over)) from exc
        raise classify(exc, timeout) from exc


async def chunks_of(stream: Any, timeout: float) -> AsyncIterator[Any]:
    """The stream's chunks; a stream that breaks off is an UpstreamError, never a quiet end.
    *timeout*: the call's own, which litellm holds each read to (named when a read times out)."""
    chunks = aiter(stream)
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except UpstreamError:
            raise
        except Exception as exc:
            if (over := too_large_in(exc)) is not None:
                raise UpstreamAnswerTooLarge(str(over)) from exc
            error = classify(exc, timeout)
            if isinstance(error, UpstreamTimeout):
                error = UpstreamTimeout(f"the stream stalled: nothing within {timeout:g} s")
            elif type(error) is UpstreamFailed:
                error = UpstreamBrokenStream(f"stream broke off: {short(exc)}")
            raise error from exc
        yield chunk


def whole_response(
    first: Any,
    text: str,
    reasoning: str,
    calls: list[dict[str, Any]],
    finish_reason: str | None,
    usage: Any,
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
        id=getattr(first, "id", None),
        created=getattr(first, "created", None),
        model=getattr(first, "model", None),
        choices=[{"index": 0, "message": message, "finish_reason": finish}],
        usage=usage.model_dump() if isinstance(usage, Usage) else usage,
    )


async def close(stream: Any) -> None:
    closing = getattr(stream, "aclose", None)
    if closing is not None:
        try:
            await closing()
        except Exception:  # closing a broken stream may fail again; it is closed either way
            pass

"""A panel seat's answer: the one value either reader hands back for a seat's call, and how a
seat's stream (either reader's `TurnStream`) is read into one."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.errors import UpstreamAnswerTooLarge, UpstreamBrokenStream, UpstreamError
from gateway.upstream.chunks import TurnStream
from gateway.upstream.failures import stream_failed


@dataclass(frozen=True)
class Answer:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    first_token_s: float | None = None
    finish_reason: str | None = None
    # the provider's response headers, lower-cased: its rate-limit headers are read from them
    headers: Mapping[str, str] = field(default_factory=dict)


def held_to(answer: Answer, limit: int | None) -> Answer:
    """*answer*, or UpstreamAnswerTooLarge when its text is over *limit* bytes."""
    text = answer.text
    if limit and len(text) > limit // 4 and len(text.encode()) > limit:
        raise UpstreamAnswerTooLarge(f"the answer was over the limit of {limit} bytes")
    return answer


async def read_stream(
    stream: TurnStream, started: float, timeout: float, limit: int | None
) -> Answer:
    """A seat's opened stream read to its end: the first token's time is known, a stream that
    breaks off before its finish is an error (never a truncated answer passed off as whole),
    and an answer that grows past *limit* bytes stops being read there."""
    parts: list[str] = []
    size = 0
    first: float | None = None
    finish: str | None = None
    tokens_in = tokens_out = 0
    chunks = aiter(stream)
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            break
        except UpstreamError:
            raise
        except Exception as exc:
            raise stream_failed(exc, timeout, seat=True) from exc
        for choice in chunk.choices:
            text = choice.delta.content
            if text:
                if first is None:
                    first = time.monotonic() - started
                parts.append(text)
                size += len(text.encode())
                if limit and size > limit:
                    with contextlib.suppress(Exception):
                        await stream.aclose()  # its connection closed rather than drained
                    raise UpstreamAnswerTooLarge(f"the answer was over the limit of {limit} bytes")
            finish = choice.finish_reason or finish
        if chunk.usage is not None:
            tokens_in = chunk.usage.prompt_tokens or tokens_in
            tokens_out = chunk.usage.completion_tokens or tokens_out
    if finish is None:
        raise UpstreamBrokenStream("stream broke off before its finish")
    return Answer("".join(parts), tokens_in, tokens_out, first, finish, stream.headers())

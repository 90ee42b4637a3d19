"""Route mode's reading of a member's reply: its chunks relayed, not summarised.

A panel seat needs only its answer's text (gateway/upstream/answer.py); a route turn passes
the model's reply on to an agent whole: tool calls, finish reason, usage, every streamed chunk
as it comes. The seam opens the member's stream (`Upstream.open_turn`, either reader, the same
typed `Chunk`s); this reads it with each failure mapped where every failure is
(gateway/upstream/failures.py), so a 429 mid-stream cools the member as one before it does. No
retries at either level: the turn's failover is the gateway's, never litellm's.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from gateway.errors import UpstreamError
from gateway.upstream.chunks import Chunk, TurnStream
from gateway.upstream.failures import stream_failed


async def chunks_of(stream: TurnStream, timeout: float) -> AsyncIterator[Chunk]:
    """The stream's chunks; a stream that breaks off is an UpstreamError, never a quiet end.
    *timeout*: the call's own, which each read is held to (named when a read times out)."""
    chunks = aiter(stream)
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except UpstreamError:
            raise
        except Exception as exc:
            raise stream_failed(exc, timeout, seat=False) from exc
        yield chunk


async def close(stream: Any) -> None:
    """Stop reading *stream* (None: nothing was opened); its connection is closed, not drained.
    Closing a broken stream may fail again: it is closed either way."""
    closing = getattr(stream, "aclose", None)
    if closing is not None:
        with contextlib.suppress(Exception):
            await closing()

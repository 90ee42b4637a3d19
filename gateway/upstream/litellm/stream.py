"""litellm's chunk stream, handed on as the gateway's typed chunks (gateway/upstream/chunks.py).

Each of litellm's `ModelResponseStream` objects is read into a `Chunk` as litellm renders it
(`model_dump(exclude_none=True)`), keeping every field litellm filled in: a client gets the
bytes it got when route mode relayed litellm's own objects, and route mode and the formats read
one shape whichever reader read the reply.
"""

from __future__ import annotations

from typing import Any

from gateway.upstream.chunks import Chunk
from gateway.upstream.failures import headers_of


class LitellmStream:
    """An open litellm stream (its `CustomStreamWrapper`), iterated as `Chunk`s."""

    def __init__(self, wrapper: Any) -> None:
        self._wrapper = wrapper
        self._chunks = aiter(wrapper)

    def __aiter__(self) -> LitellmStream:
        return self

    async def __anext__(self) -> Chunk:
        found = await anext(self._chunks)
        return Chunk.read(found.model_dump(exclude_none=True), found.model, kept=True)

    def in_hand(self) -> bool:
        return False  # litellm reads one event per step; none is known to be waiting

    def headers(self) -> dict[str, str]:
        return headers_of(self._wrapper)

    async def aclose(self) -> None:
        closing = getattr(self._wrapper, "aclose", None)
        if closing is not None:
            await closing()

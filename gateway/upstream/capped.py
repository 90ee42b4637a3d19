"""A cap on how many bytes one upstream answer may bring in, enforced while it is read.

Why: an upstream (or anything posing as one) can answer with gigabytes. litellm reads a plain
answer whole before the gateway sees it, and a streamed one chunk by chunk, so a check on the
finished answer comes too late for memory. The shared HTTP session builds its responses with
`CappedResponse`, whose body reader counts bytes as they are read and fails the read once the
call's cap (a context variable set around each call) is passed: reading stops there, and the
connection is closed, not drained.

The cap here is on raw bytes (JSON or SSE framing included), so it is set with room above the
answer limit; the answer's own text is then held to `gateway.max_answer_bytes` exactly.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import aiohttp

# (raw byte cap, the answer limit it stands for), or None: no cap
_CAP: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
    "bench_answer_cap", default=None
)


class AnswerTooLarge(Exception):
    """The answer passed its cap while being read (raised inside litellm's read)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer was over the limit of {limit} bytes")
        self.limit = limit


@contextlib.contextmanager
def capped(raw_bytes: int, answer_bytes: int) -> Iterator[None]:
    """Hold the responses read in this context to *raw_bytes*; *answer_bytes* is the limit
    named in the error, the one a person set."""
    token = _CAP.set((raw_bytes, answer_bytes))
    try:
        yield
    finally:
        _CAP.reset(token)


def raw_cap(limit: int, stream: bool) -> int:
    """Raw bytes to read for an answer of at most *limit* bytes of text: a plain answer is one
    JSON document (escapes may take 6 bytes for one), a streamed one wraps every token or two
    in a chunk of a few hundred bytes of JSON."""
    return (64 if stream else 8) * limit + 65536


def too_large_in(exc: BaseException | None) -> AnswerTooLarge | None:
    """The AnswerTooLarge somewhere in *exc*'s cause chain (litellm and the SDK wrap it)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, AnswerTooLarge):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


class _CountingReader:
    """The response's body reader, counting what is read through it."""

    def __init__(self, inner: aiohttp.StreamReader, cap: int, limit: int, response: Any) -> None:
        self._inner, self._cap, self._limit, self._response = inner, cap, limit, response
        self._read = 0

    def _count(self, data: bytes) -> bytes:
        self._read += len(data)
        if self._read > self._cap:
            self._response.close()  # stop reading: the connection is dropped, not drained
            raise AnswerTooLarge(self._limit)
        return data

    async def read(self, n: int = -1) -> bytes:
        return self._count(await self._inner.read(n))

    async def readany(self) -> bytes:
        return self._count(await self._inner.readany())

    async def readchunk(self) -> tuple[bytes, bool]:
        data, end = await self._inner.readchunk()
        return self._count(data), end

    async def readline(self) -> bytes:
        return self._count(await self._inner.readline())

    def iter_chunked(self, n: int) -> Any:
        return aiohttp.streams.AsyncStreamIterator(lambda: self.read(n))

    def iter_any(self) -> Any:
        return aiohttp.streams.AsyncStreamIterator(self.readany)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CappedResponse(aiohttp.ClientResponse):
    """A response whose body is read through a counter when its call set a cap."""

    async def start(self, connection: Any) -> CappedResponse:
        await super().start(connection)
        if (found := _CAP.get()) is None:
            return self
        cap, limit = found
        declared = self.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > cap:
            self.close()
            raise AnswerTooLarge(limit)
        self.content = _CountingReader(self.content, cap, limit, self)  # type: ignore[assignment]
        return self

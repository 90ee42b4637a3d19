"""What one upstream reply may bring in, enforced as it arrives, for both readers' sessions.

Why: an upstream (or anything posing as one) can answer with gigabytes, a line that never ends,
a small gzip body that inflates to gigabytes, or a redirect to a host of its choosing. litellm
reads a plain answer whole before the gateway sees it, and a streamed one chunk by chunk, so a
check on the finished answer comes too late for memory. Both readers' HTTP sessions build their
requests and responses here:

- every request asks for the answer as it is (`Accept-Encoding: identity`), whatever the SDK
  on top would ask for, and the sessions never inflate a body themselves; a reply encoded all
  the same (gzip, deflate, br, ...) is refused at its headers, before a byte of it is read, so
  nothing is ever decompressed and no bomb can go off;
- a redirect (any 3xx) is never followed: the prompt goes only where the config says, and the
  reply is refused naming its status and the host its `Location` names;
- a body is read through a counter when its call set a cap (a context variable set around
  each call): reading fails once the cap is passed, the connection closed rather than
  drained. A whole-body read is made piece by piece, so the cap holds before the body ends (a
  plain answer without `Content-Length` was read whole first); in an event stream no one line
  may pass a cap of its own (an endless line was held up to the whole stream's cap).

The caps are on raw bytes (JSON or SSE framing included), so they are set with room above the
answer limit; the answer's own text is then held to `gateway.max_answer_bytes` exactly. What
each refusal becomes is gateway/upstream/failures.py's to say.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import hdrs

# (raw byte cap, the answer limit it stands for, lines capped too: a stream), or None: no cap
_CAP: contextvars.ContextVar[tuple[int, int, bool] | None] = contextvars.ContextVar(
    "bench_answer_cap", default=None
)


class Refusal(Exception):
    """A reply refused while it was being read (raised inside whichever reader read it)."""


class AnswerTooLarge(Refusal):
    """The answer passed its cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer was over the limit of {limit} bytes")
        self.limit = limit


class LineTooLong(Refusal):
    """An event stream's line passed its cap: not an event stream any honest provider sends."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"an event stream line ran past {cap} bytes without ending")
        self.cap = cap


class Redirected(Refusal):
    def __init__(self, status: int, location: str | None) -> None:
        host = _host_of(location) if location else None
        where = f" to {host}" if host else " (no Location)"
        super().__init__(f"the provider answered {status}, a redirect{where}; never followed")
        self.status, self.host = status, host


class Encoded(Refusal):
    def __init__(self, encoding: str) -> None:
        shown = encoding if len(encoding) <= 40 else encoding[:37] + "..."
        super().__init__(
            f"the provider answered with Content-Encoding {shown!r} though asked for identity; "
            "not read"
        )
        self.encoding = encoding


@contextlib.contextmanager
def capped(raw_bytes: int, answer_bytes: int, stream: bool = False) -> Iterator[None]:
    """Hold the responses read in this context to *raw_bytes*; *answer_bytes* is the limit
    named in the error, the one a person set; a *stream*'s lines to `line_cap` of it."""
    token = _CAP.set((raw_bytes, answer_bytes, stream))
    try:
        yield
    finally:
        _CAP.reset(token)


def raw_cap(limit: int, stream: bool) -> int:
    """Raw bytes to read for an answer of at most *limit* bytes of text: a plain answer is one
    JSON document (escapes may take 6 bytes for one), a streamed one wraps every token or two
    in a chunk of a few hundred bytes of JSON."""
    return (64 if stream else 8) * limit + 65536


def line_cap(limit: int) -> int:
    """The longest event-stream line read for an answer of at most *limit* bytes: one event
    carries one chunk, which holds no more of the answer than the whole answer may be."""
    return limit + 65536


def refusal_in(exc: BaseException | None) -> Refusal | None:
    """The Refusal somewhere in *exc*'s cause chain (litellm and the SDK wrap it)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Refusal):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _host_of(location: str) -> str:
    try:
        host = urlsplit(location).hostname
    except ValueError:
        return "an unreadable Location"
    return host or "a path on the same host"


class _CountingReader:
    """The response's body reader, counting what is read through it (and, in an event stream,
    how long the line being read has grown)."""

    def __init__(
        self, inner: aiohttp.StreamReader, cap: int, limit: int, response: Any, lines: bool
    ) -> None:
        self._inner, self._cap, self._limit, self._response = inner, cap, limit, response
        self._line_cap = line_cap(limit) if lines else 0
        self._read = 0
        self._line = 0  # bytes since the last newline

    def _count(self, data: bytes) -> bytes:
        self._read += len(data)
        if self._read > self._cap:
            self._response.close()  # stop reading: the connection is dropped, not drained
            raise AnswerTooLarge(self._limit)
        if self._line_cap:
            end = data.rfind(b"\n")
            self._line = len(data) - end - 1 if end >= 0 else self._line + len(data)
            if self._line > self._line_cap:
                self._response.close()
                raise LineTooLong(self._line_cap)
        return data

    async def read(self, n: int = -1) -> bytes:
        if n >= 0:
            return self._count(await self._inner.read(n))
        # the whole body, piece by piece as it arrives: counted before it is all in memory
        parts: list[bytes] = []
        try:
            while data := await self._inner.readany():
                parts.append(self._count(data))
        except BaseException:
            parts.clear()  # what was read goes now, not when the error is let go
            raise
        return b"".join(parts)

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


class IdentityRequest(aiohttp.ClientRequest):
    """A request that asks for the answer unencoded, whatever headers it was given."""

    def update_auto_headers(self, skip_auto_headers: Iterable[str] | None) -> None:
        super().update_auto_headers(skip_auto_headers)
        self.headers[hdrs.ACCEPT_ENCODING] = "identity"


class CappedResponse(aiohttp.ClientResponse):
    """A response refused at its headers when it redirects or is encoded, and whose body is
    read through a counter when its call set a cap."""

    async def start(self, connection: Any) -> CappedResponse:
        await super().start(connection)
        if 300 <= self.status < 400:
            self.close()
            raise Redirected(self.status, self.headers.get(hdrs.LOCATION))
        encoding = self.headers.get(hdrs.CONTENT_ENCODING, "").strip().lower()
        if encoding not in ("", "identity"):
            self.close()
            raise Encoded(encoding)
        if (found := _CAP.get()) is None:
            return self
        cap, limit, stream = found
        declared = self.headers.get(hdrs.CONTENT_LENGTH, "")
        digits = declared.isascii() and declared.isdigit()
        if digits and (len(declared) > 18 or int(declared) > cap):
            self.close()
            raise AnswerTooLarge(limit)
        counted = _CountingReader(self.content, cap, limit, self, lines=stream)
        self.content = counted  # type: ignore[assignment]
        return self


def session_options() -> dict[str, Any]:
    """What both readers' sessions are built with, for the above to hold."""
    return {
        "request_class": IdentityRequest,
        "response_class": CappedResponse,
        "auto_decompress": False,  # never inflated: an encoded reply is refused instead
    }

"""The HTTP protocol the gateway is served with: uvicorn's httptools protocol, with each request
head bounded in size and in time.

uvicorn puts no limit on a request head under httptools: a 50 MB header was read whole (3 s of
parsing while every other client waited), and 100 connections each holding 2 MB of an unfinished
head held 170 MB. Nor does it time out a connection that trickles its head or says nothing
(`timeout_keep_alive` only covers the wait between requests). Here a head over `head_bytes` gets
a 431 and the connection is closed, and a head not complete within `head_timeout_s` of its first
byte (or of the connection, for the first request) ends the connection, with a 408 if part of a
head had come. The work per request is a counter, and a timer armed and cancelled.

A request body is the app's to time (`gateway.body_timeout_s`: gateway/endpoints/common.py);
one that is still arriving when its reply is complete (a route that needs no body, or a 408 for
one too slow) ends the connection once the reply is out: the body would otherwise have to be
read to its end before the next request, for as long as its sender trickles it.

A response's writes are also gathered per turn of the event loop (`Gathered`): uvicorn writes
the status line and headers the moment they are sent, and each body message as it comes, so a
reply went out as two writes at least, and a route stream's opening as three (headers, the
role chunk, the first text). Each write wakes the client, and on a busy machine the woken client
took the core from the gateway before its next write (a route stream's first text came ~0.9 ms
later for it). What one step of the app sends now leaves as one write.

`serve` (every worker path), `demo` and the tests' servers all use it (`http=` of
`uvicorn.Config`); `limited()` gives a variant with other limits.

Why uvicorn's internals, and not a public seam: uvicorn 0.54.0 (pinned for this) offers none
finer than `uvicorn.Config(http=<an asyncio.Protocol class>)`, which it builds with its own
keyword arguments (config, server_state, app_state, _loop). Its settings bound no head under
httptools (`h11_max_incomplete_event_size` bounds h11's, a pure-Python parser several times
slower), time out no head (`timeout_keep_alive` is the wait between requests), and gather no
writes; an ASGI app sees a request only once its head is complete, and cannot end a connection
without answering. A protocol of our own wrapping uvicorn's, through asyncio's public Protocol
and Transport, would see bytes but not where a head ends (that needs the HTTP parse again, body
lengths and chunking included), nor the reply in progress. So this subclasses
`HttpToolsProtocol` and uses, each for one reason: the parser callbacks `on_message_begin`,
`on_headers_complete`, `on_message_complete` (where a head starts and ends), `on_response_complete`
and `send_400_response` (how a reply and a parser error end), `shutdown` (the server's stop); the
attributes `url`, `headers` (a head's size), `loop`, `transport`, and `cycle` with its
`transport`, `send`, `more_body`, `keep_alive` and `response_complete` (the reply in progress);
and one private method, `_unset_keepalive_if_required` (uvicorn's keep-alive timer, cancelled
before a close).
tests/serve/test_connection.py exercises each, so an upgrade that moves one fails there.
The cycle's `send` is replaced by another bound method of the cycle, as uvicorn's own is: the
simulated upstream (simulator/connection.py) reaches a connection's transport through it.
"""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Awaitable, Callable
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEAD_BYTES = 64 * 1024
GATHER_BYTES = 64 * 1024  # written at once past this, so flow control still sees a big body
HEAD_TIMEOUT_S = 10.0
LINGER_S = 2.0
# uvicorn.Config(http=...) as a string, for settings that cross into other processes
PROTOCOL = "gateway.serve.connection:HeadLimitedProtocol"


class _HeadTooLarge(Exception):
    pass


def _reply(status: str, message: str, code: str) -> bytes:
    body = (
        json.dumps(
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": code,
                }
            }
        ).encode()
        + b"\n"
    )  # as every JSON body the gateway sends ends (gateway/replies.py)
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def linger(state: Any) -> None:
    """From now on, every connection of the server whose *state* (uvicorn's `ServerState`)
    this is answers its next request as its last (`HeadLimitedProtocol.shutdown`)."""
    state.bench_lingering = True


def lingering(state: Any) -> bool:
    return bool(getattr(state, "bench_lingering", False))


class HeadLimitedProtocol(HttpToolsProtocol):
    head_bytes = HEAD_BYTES
    head_timeout_s = HEAD_TIMEOUT_S

    @classmethod
    def limited(
        cls, *, head_bytes: int = HEAD_BYTES, head_timeout_s: float = HEAD_TIMEOUT_S
    ) -> type[HeadLimitedProtocol]:
        """This protocol with other limits (a class of its own, for `http=` in this process)."""
        return type(
            cls.__name__, (cls,), {"head_bytes": head_bytes, "head_timeout_s": head_timeout_s}
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._heading = True  # the next bytes read belong to a request head
        self._head_read = 0  # bytes of the current head read before the read that ends it
        self._last_read = 0
        self._counting = False
        self._over = False
        self._head_timer: asyncio.TimerHandle | None = None
        self._done = False
        self.last_request = False  # the next request is this connection's last (`shutdown`)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """The server stops. A replaced worker (`linger`) keeps each connection open, the reply
        in progress on it included, until its keep-alive ends; the next request on it is
        answered and the connection closed after that reply (`Connection: close`). uvicorn
        closes an idle connection at once, and one whose reply is under way once that reply
        ends, though its head (sent before) said keep-alive: either raced a client that had
        just sent its next request on it, which met a reset (a reload under traffic failed a
        request or two that way, mostly one sent right after a stream)."""
        if lingering(self.server_state):
            self.last_request = True
            return
        super().shutdown()

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        self._counting = self._heading  # the read starts in a head: it counts, unless it ends it
        self._last_read = len(data)
        super().data_received(data)
        if self._counting and not self._done:  # the head is still not complete
            self._head_read += len(data)
            if self._head_read > self.head_bytes:
                self._refuse_head()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error, which is also what a callback's raise becomes."""
        if self._over:
            self._refuse_head()
        else:
            super().send_400_response(msg)

    # parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._heading = True
        if self._head_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._counting = False
        if (
            self._head_read + self._last_read > self.head_bytes
            and self._head_size() > self.head_bytes
        ):
            self._over = True
            raise _HeadTooLarge  # httptools stops parsing; uvicorn calls send_400_response
        self._heading, self._head_read = False, 0
        super().on_headers_complete()
        if self.cycle is not None:  # (its task has not run yet: no write is missed)
            if self.last_request or lingering(self.server_state):  # (one accepted late too)
                self.cycle.keep_alive = False
            gathered = Gathered(self.transport, self.loop, self._closing)
            self.cycle.transport = gathered  # type: ignore[assignment]
            self.cycle.send = _saying_close(self.cycle)  # type: ignore[method-assign, assignment]

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.cycle is not None and self.cycle.more_body and not self._done:
            self._unset_keepalive_if_required()
            self._end(b"")  # the body the reply did not wait for is still arriving

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._heading = True

    # the limits

    def _head_size(self) -> int:
        """The head's size as parsed (only worked out when the reads say it may be over)."""
        return len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def _refuse_head(self) -> None:
        message = f"The request head is over the limit of {self.head_bytes} bytes."
        self._end(_reply("431 Request Header Fields Too Large", message, "header_too_large"))

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            self._arm()  # a pipelined head waits behind a request still being answered
            return
        message = f"The request head was not complete within {self.head_timeout_s:g} s."
        partial = self._head_read > 0 or self._last_read > 0
        self._end(_reply("408 Request Timeout", message, "timeout") if partial else b"")

    def _closing(self) -> None:
        """A reply closes its connection (`Connection: close`, a 408): as `_end` does, when
        the request's body is still arriving; else at once."""
        if self.cycle is not None and self.cycle.more_body:
            self._end(b"")
        else:
            self.transport.close()

    def _end(self, reply: bytes) -> None:
        """Answer (*reply*, if any) and close. After an answer the client may still be sending
        (the rest of a huge head or of a body): closing with its bytes unread would reset the
        connection and could destroy the answer in flight, so the write side is shut first and
        what comes is read and dropped, for at most LINGER_S. So does a close after the app's
        own answer while the request's body is still arriving."""
        self._done = True
        self._disarm()
        transport = self.transport
        if transport.is_closing():
            return
        if self.cycle is not None and isinstance(self.cycle.transport, Gathered):
            self.cycle.transport.flush()  # the reply's last bytes, before the write side shuts
        if not reply and not (self.cycle is not None and self.cycle.more_body):
            transport.close()
            return
        if reply:
            transport.write(reply)
        if transport.can_write_eof():
            transport.write_eof()
            self.loop.call_later(LINGER_S, transport.close)
        else:
            transport.close()


def _saying_close(cycle: Any) -> Callable[[Any], Awaitable[None]]:
    """The cycle's `send`, saying `Connection: close` in a reply that starts while the request's
    body is still arriving: such a reply ends its connection (`on_response_complete`), and a
    client told nothing would send its next request on it and find it closed. A bound method of
    the cycle, as the one it replaces (see the module docstring)."""
    send = cycle.send

    async def saying_close(self: Any, message: Any) -> None:
        if message["type"] == "http.response.start" and self.more_body:
            self.keep_alive = False  # uvicorn then writes the header
        await send(message)

    return types.MethodType(saying_close, cycle)


class Gathered:
    """A response's transport whose writes in one turn of the event loop leave as one: the
    bytes wait for the end of the turn (a callback scheduled with the first), or leave at once
    past GATHER_BYTES or when the response closes the connection. Only the response cycle
    writes through it, so nothing else can be written between its bytes."""

    def __init__(
        self,
        transport: asyncio.Transport,
        loop: asyncio.AbstractEventLoop,
        closing: Callable[[], None] | None = None,
    ) -> None:
        """*closing*: how the response closes the connection (the transport's `close`)."""
        self._transport = transport
        self._loop = loop
        self._closing = closing or transport.close
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)
        self._size += len(data)
        if self._size >= GATHER_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        self._size = 0
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._closing()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:  # the rest of the transport, as it is
        return getattr(self._transport, name)

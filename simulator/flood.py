"""Replies too large to script: bytes made as they are sent, never held (the `flood` behaviour).

Why: a hostile or broken provider may send a gigabyte with no `Content-Length`, a line that
never ends, or a small gzip body that inflates to gigabytes. `script` replays given bytes and
would have to hold them all; a flood is generated piece by piece, so the simulator's memory
stays flat while the gateway's is measured.

A flood is ``{"head": "...", "fill_bytes": N, "fill": "A", "tail": "...", "encoding":
"gzip"|"deflate"|"br", "end": "end"|"close"|"reset"|"stall", "status": 200, "headers": {...},
"content_type": "..."}``: *head*, then *fill_bytes* of *fill* repeated (never a newline unless
*fill* has one), then *tail*, then the *end*: the body ended, the connection closed (FIN) or
reset (RST) mid-body, or held open with nothing more until the client leaves. With *encoding*
the body is compressed as it is made (`Content-Encoding` set; `br` names an encoding the
simulator does not make, so its bytes are gzip's: a client must not try to read them).
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any, Protocol

PIECE = 1 << 20  # bytes of fill made and written at a time

_KEYS: dict[str, type | tuple[type, ...]] = {
    "head": str, "fill_bytes": int, "fill": str, "tail": str, "encoding": str, "end": str,
    "status": int, "headers": dict, "content_type": str,
}  # fmt: skip
_ENDS = ("end", "close", "reset", "stall")
_ENCODINGS = ("gzip", "deflate", "br")


class Exchange(Protocol):
    """What the simulator's exchange gives a reply (simulator/exchange.py's `Exchange`)."""

    gone: asyncio.Event  # set once the client has left

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None: ...
    async def write(self, data: bytes, more: bool = True) -> None: ...
    async def drop(self, *, abrupt: bool, outcome: str) -> None: ...
    async def wait_for_client_to_leave(self, outcome: str) -> None: ...
    def finish(self, outcome: str) -> None: ...


def check(flood: dict[str, Any]) -> None:
    """ValueError naming the first key of *flood* that is unknown or mistyped."""
    for key, value in flood.items():
        kind = _KEYS.get(key)
        if kind is None or not isinstance(value, kind) or isinstance(value, bool):
            known = ", ".join(_KEYS)
            raise ValueError(f"simulator flood key {key!r} is unknown or mistyped ({known})")
    if flood.get("end", "end") not in _ENDS:
        raise ValueError(f"simulator flood end must be one of {', '.join(_ENDS)}")
    if flood.get("encoding") not in (None, *_ENCODINGS):
        raise ValueError(f"simulator flood encoding must be one of {', '.join(_ENCODINGS)}")
    if not flood.get("fill", "A"):
        raise ValueError("simulator flood fill must not be empty")


def _pieces(flood: dict[str, Any]) -> Any:
    """The body's bytes, a piece at a time, compressed as they go when asked."""
    encoding = flood.get("encoding")
    packer = None
    if encoding is not None:
        wbits = -zlib.MAX_WBITS if encoding == "deflate" else 16 + zlib.MAX_WBITS
        packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    fill = flood.get("fill", "A").encode()
    piece = fill * max(1, PIECE // len(fill))
    left = flood.get("fill_bytes", 0)
    parts: list[bytes] = [flood.get("head", "").encode()]
    while True:
        for part in parts:
            data = packer.compress(part) if packer is not None else part
            if data:
                yield data
        if left <= 0:
            break
        parts = [piece[:left]]
        left -= len(parts[0])
    tail = flood.get("tail", "").encode()
    last = (packer.compress(tail) + packer.flush()) if packer is not None else tail
    if last:
        yield last


async def reply(exchange: Exchange, flood: dict[str, Any]) -> None:
    """Send *flood* (see the module's docstring) through *exchange*."""
    stated = flood.get("headers") or {}
    headers = [(str(k).lower().encode(), str(v).encode()) for k, v in stated.items()]
    if flood.get("encoding"):
        headers.append((b"content-encoding", flood["encoding"].encode()))
    kind = flood.get("content_type", "application/json").encode()
    await exchange.start(flood.get("status", 200), [(b"content-type", kind), *headers])
    for data in _pieces(flood):
        if exchange.gone.is_set():  # the client hung up: nothing more is made
            return exchange.finish("client_disconnected")
        await exchange.write(data)
        await asyncio.sleep(0)  # a flood never holds the simulator's loop
    end = flood.get("end", "end")
    if end in ("close", "reset"):
        return await exchange.drop(abrupt=end == "reset", outcome=f"flood {end}")
    if end == "stall":
        return await exchange.wait_for_client_to_leave("flood stalled")
    exchange.finish("flood")
    await exchange.write(b"", more=False)

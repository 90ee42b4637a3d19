"""One request and its response, as the steps a behaviour can stop at: a pause the client may
leave during, the status line, each written part, a dropped connection; each end recorded in the
request log just before the last bytes go out."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from starlette.types import Scope, Send

from simulator.clock import Clock
from simulator.connection import close, transport_of
from simulator.state import Behaviour, LoggedRequest


class Exchange:
    """One request/response; the methods are the steps a behaviour can stop at."""

    def __init__(
        self,
        scope: Scope,
        send: Send,
        entry: LoggedRequest,
        b: Behaviour,
        gone: asyncio.Event,
        clock: Clock,
    ) -> None:
        self.scope, self.send, self.entry, self.b, self.gone = scope, send, entry, b, gone
        self.clock = clock
        self.model = entry["model"]

    def finish(self, outcome: str) -> None:
        """Record the end. Called just *before* the last bytes (or the close) go out, so a client
        that has seen the end of its response always finds ``ended`` set in the log."""
        self.entry["outcome"], self.entry["ended"] = outcome, self.clock.now()

    def stated_headers(self) -> list[tuple[bytes, bytes]]:
        """The behaviour's own response headers (`headers`), as a provider states its limits."""
        stated = self.b["headers"] or {}
        return [(str(k).lower().encode(), str(v).encode()) for k, v in stated.items()]

    async def pause(self, seconds: float) -> bool:
        """Sleep, but return False at once if the client leaves, so the log shows when it did."""
        await self.clock.wait(self.gone, seconds)
        if self.gone.is_set():
            self.finish("client_disconnected")
            return False
        return True

    async def wait_for_client_to_leave(self, outcome: str) -> None:
        await self.gone.wait()
        self.finish(outcome)

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.entry["status"] = status
        await self.send({"type": "http.response.start", "status": status, "headers": headers})

    async def write(self, data: bytes, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": more})

    async def send_json(
        self,
        status: int,
        body: dict[str, Any],
        headers: Iterable[tuple[bytes, bytes]] = (),
        outcome: str = "ok",
    ) -> None:
        await self.start(status, [(b"content-type", b"application/json"), *headers])
        self.finish(outcome)
        await self.write(json.dumps(body).encode(), more=False)

    async def drop(self, *, abrupt: bool, outcome: str) -> None:
        """Close the TCP connection: RST if *abrupt* (no response at all), else a plain FIN."""
        transport = transport_of(self.scope)
        self.finish(outcome)
        if transport is None:
            raise RuntimeError(f"simulated {outcome}: no uvicorn transport, raising instead")
        await close(transport, abrupt=abrupt, gone=self.gone)

    async def replay(self, script: dict[str, Any]) -> None:
        """The scripted reply, part by part (see the `script` behaviour key)."""
        stated = script.get("headers") or {}
        headers = [(str(k).lower().encode(), str(v).encode()) for k, v in stated.items()]
        kind = script.get("content_type", "text/event-stream").encode()
        await self.start(script.get("status", 200), [(b"content-type", kind), *headers])
        for part in script.get("parts", []):
            await self.write(part.encode("utf-8", "surrogateescape"))
        if script.get("cut"):
            return await self.drop(abrupt=False, outcome="cut")
        self.finish("scripted")
        await self.write(b"", more=False)

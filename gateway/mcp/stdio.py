"""`bench-gateway mcp`: the bench's MCP tools over stdio, for hosts that launch their servers
(`claude mcp add bench -- bench-gateway mcp`). A thin client of a running gateway: every tool
call is a request to its HTTP routes with the user's key, so keys, scopes, rpm and records are
the gateway's, exactly as over `POST /mcp`.

Quiet unless asked: its stderr is the host's log of the server (Claude Code shows it), and a
line per HTTP request of the client underneath (~60 in a short session) buried what matters.
Warnings and errors still show; `--verbose` or `BENCH_LOG_LEVEL=INFO` brings the rest back.
"""

from __future__ import annotations

from typing import Any

import anyio

from gateway.mcp.remote import Refused, RemoteGateway, Unreachable
from gateway.mcp.tools import LogLevel, Progress, build_server


class RemoteBench:
    """The tools' Bench over HTTP; a gateway that does not answer is a tool error, not a crash."""

    def __init__(self, gateway: RemoteGateway) -> None:
        self.gateway = gateway

    async def collections(self) -> list[dict[str, Any]]:
        try:
            return await self.gateway.collections()
        except Unreachable as exc:
            raise Refused(str(exc)) from None

    async def ask(
        self, body: dict[str, Any], headers: dict[str, str], progress: Progress
    ) -> dict[str, Any]:
        total, done = 0, 0

        async def seated(seats: list[dict[str, Any]]) -> None:
            nonlocal total
            total = len(seats)
            await progress(0, total, f"{total} seats thinking")

        async def finished(seat: dict[str, Any]) -> None:
            nonlocal done
            if not seat["replaced_by"]:  # a seat handed to a reserve is not done yet
                done += 1
            message = f"{seat['seat']} ({seat['alias']}) {seat['status']}"
            await progress(min(done, total), total, message)

        try:
            return await self.gateway.ask(body, headers, seated, finished)
        except Unreachable as exc:
            raise Refused(str(exc)) from None

    async def verdict(self, verdict: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.gateway.verdict(verdict)
        except Unreachable as exc:
            raise Refused(str(exc)) from None

    async def pending(self, calls: list[str]) -> dict[str, Any]:
        try:
            return await self.gateway.pending(calls)
        except Unreachable as exc:
            raise Refused(str(exc)) from None


def run_stdio(url: str, key: str | None, log_level: LogLevel = "WARNING") -> int:
    async def serve() -> None:
        gateway = RemoteGateway(url, key)
        bench = RemoteBench(gateway)
        try:
            await build_server(lambda ctx: bench, log_level).run_stdio_async()
        finally:
            await gateway.close()

    anyio.run(serve)
    return 0

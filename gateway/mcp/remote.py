"""A client of a running gateway, over its HTTP routes: what `bench-gateway mcp` (stdio) and the
shell commands (`ask`, `verdict`, `status`) are built on.

It speaks only the public routes, so it works against any gateway a user can reach, with the
key they were given. A panel is asked with `stream: true`: each seat's section arrives the moment
that seat finishes (contract §6), which is what lets a terminal or an MCP host show progress.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_URL = "http://127.0.0.1:8123"
# A seat's section in the reply's markdown (contract §5): its header, then call · status · time.
_SECTION = re.compile(
    r"^## (?P<seat>\S+) — (?P<alias>.+)\n`(?P<call>[^`]+)` · (?P<status>\w+) · "
    r"(?P<seconds>[\d.]+) s(?: · replaces (?P<replaces>\S+))?(?: · replaced by (?P<by>\S+))?",
)

OnSeats = Callable[[list[dict[str, Any]]], Awaitable[None] | None]
OnSeat = Callable[[dict[str, Any]], Awaitable[None] | None]


class Refused(Exception):
    """The gateway answered with an error: its message, and the seats when there were any."""

    def __init__(self, message: str, bench: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.bench = bench


class Unreachable(Exception):
    """No gateway answered at the URL."""


def settings(url: str | None, key: str | None) -> tuple[str, str | None]:
    """The URL and key: the flags, else BENCH_GATEWAY_URL and BENCH_GATEWAY_KEY."""
    url = url or os.environ.get("BENCH_GATEWAY_URL") or DEFAULT_URL
    return url.rstrip("/"), key or os.environ.get("BENCH_GATEWAY_KEY") or None


def seat_of(section: str) -> dict[str, Any] | None:
    """A streamed seat section as {seat, alias, call, status, seconds, replaces, replaced_by}."""
    found = _SECTION.match(section.lstrip("\n"))
    if found is None:
        return None
    return {
        "seat": found["seat"],
        "alias": found["alias"],
        "call": found["call"],
        "status": found["status"],
        "seconds": float(found["seconds"]),
        "replaces": found["replaces"],
        "replaced_by": found["by"],
    }


async def _call(callback: Callable[[Any], Awaitable[None] | None] | None, value: Any) -> None:
    if callback is not None:
        outcome = callback(value)
        if outcome is not None:
            await outcome


class RemoteGateway:
    def __init__(self, url: str, key: str | None, timeout: float = 60.0) -> None:
        self.url = url
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        # No overall limit: a panel takes as long as its slowest seat; reads see a keep-alive
        # at least every gateway.keepalive_s.
        self.http = httpx.AsyncClient(
            base_url=url, headers=headers, timeout=httpx.Timeout(timeout, connect=5.0)
        )

    async def close(self) -> None:
        await self.http.aclose()

    async def _send(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        try:
            response = await self.http.request(method, path, json=body)
        except httpx.TransportError as exc:
            raise Unreachable(f"No gateway answering at {self.url} ({exc}).") from None
        return _answer(response.status_code, response.content)

    async def collections(self) -> list[dict[str, Any]]:
        return list((await self._send("GET", "/v1/models"))["data"])

    async def models(self) -> list[dict[str, Any]]:
        return list((await self._send("GET", "/bench/models"))["models"])

    async def health(self) -> dict[str, Any]:
        """Models' and connections' health and the actions to take (`GET /bench/health`)."""
        return await self._send("GET", "/bench/health")

    async def retire(self, alias: str, why: str) -> dict[str, Any]:
        return await self._send(
            "POST", f"/bench/models/{quote(alias, safe='')}/retire", {"why": why}
        )

    async def restore(self, alias: str) -> dict[str, Any]:
        return await self._send("POST", f"/bench/models/{quote(alias, safe='')}/restore")

    async def suite(self) -> dict[str, Any]:
        """The suite's tasks, runs and figures (`GET /bench/suite`)."""
        return await self._send("GET", "/bench/suite")

    async def run_suite(self, body: dict[str, Any]) -> str:
        """Start a suite run (`POST /bench/suite/run`); its id."""
        return str((await self._send("POST", "/bench/suite/run", body))["run"])

    async def suite_drafts(self) -> list[dict[str, Any]]:
        return list((await self._send("GET", "/bench/suite/drafts"))["drafts"])

    async def decide_draft(self, draft: str, action: str) -> dict[str, Any]:
        """*action*: approve or reject."""
        return await self._send("POST", f"/bench/suite/drafts/{quote(draft, safe='')}/{action}")

    async def usage(self) -> dict[str, Any]:
        """This month's usage (`GET /bench/usage`): calls, tokens and errors per model."""
        return await self._send("GET", "/bench/usage")

    async def verdict(self, verdict: dict[str, Any]) -> dict[str, Any]:
        return await self._send("POST", "/bench/verdict", verdict)

    async def pending(self, calls: list[str] | None = None, limit: int = 50) -> dict[str, Any]:
        body: dict[str, Any] = {"calls": calls} if calls is not None else {"limit": limit}
        return await self._send("POST", "/bench/pending", body)

    async def ask(
        self,
        body: dict[str, Any],
        headers: dict[str, str],
        on_seats: OnSeats | None = None,
        on_seat: OnSeat | None = None,
    ) -> dict[str, Any]:
        """Ask a panel, streamed: *on_seats* gets the seated plan, *on_seat* each seat as it
        finishes. Returns the reply as a chat.completion (content and `bench`)."""
        request = self.http.build_request(
            "POST", "/v1/chat/completions", json={**body, "stream": True}, headers=headers
        )
        try:
            response = await self.http.send(request, stream=True)
        except httpx.TransportError as exc:
            raise Unreachable(f"No gateway answering at {self.url} ({exc}).") from None
        try:
            if response.status_code != 200:
                _answer(response.status_code, await response.aread())
            seated = json.loads(response.headers.get("x-bench-seats") or "[]")
            await _call(on_seats, seated)
            return await _read_stream(response, on_seat)
        except httpx.TransportError as exc:
            raise Refused(f"The gateway broke off the reply ({exc}).") from None
        finally:
            await response.aclose()


async def _read_stream(response: httpx.Response, on_seat: OnSeat | None) -> dict[str, Any]:
    content: list[str] = []
    last: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[len("data: ") :])
        if "error" in chunk:
            error = chunk["error"]
            raise Refused(error.get("message") or str(error), chunk.get("bench"))
        last = chunk
        for choice in chunk.get("choices") or []:
            text = (choice.get("delta") or {}).get("content")
            if text:
                content.append(text)
                seat = seat_of(text)
                if seat is not None:
                    await _call(on_seat, seat)
    if "bench" not in last:
        raise Refused("The gateway's reply ended before its last chunk.")
    return {
        "id": last.get("id"),
        "model": last.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(content)}}],
        "usage": last.get("usage"),
        "bench": last["bench"],
    }


def _answer(status: int, raw: bytes) -> dict[str, Any]:
    """A reply's JSON, or Refused with the gateway's own message."""
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if status >= 400 or not isinstance(body, dict):
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        bench = body.get("bench") if isinstance(body, dict) else None
        raise Refused(message or f"The gateway answered {status}.", bench)
    return body

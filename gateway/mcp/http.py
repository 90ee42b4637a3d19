"""`POST /mcp`: the bench's MCP tools on the gateway itself, over MCP's streamable HTTP.

The request carries the gateway key (`Authorization: Bearer` or `x-api-key`) like every route:
it is checked before the MCP SDK sees the request (401 as any route), and so is the body: read
within the gateway's limits of size and time, and refused unless it is one JSON-RPC message
(gateway/mcp/message.py: the SDK takes some malformed ones as notifications). The transport runs
stateless: every request stands alone and is checked on its own, so no session can outlive its
key's revocation, and any of a gateway's workers serves any request. A tool call seats its
panel through gateway/panel/seating.py, the path every route takes: the same admission, scope
and rpm.

DNS rebinding: the gateway's guard checks Host and Origin first; the SDK's own check stays on,
given the same names (loopback on any port, since the guard pins the bound port already;
`gateway.allowed_hosts`; the host of `gateway.public_url`), so neither lets in what the other
would refuse. The SDK's session manager runs in the gateway's lifespan (gateway/app.py): a
mounted app's own lifespan never runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from gateway.config.settings import Config
from gateway.endpoints.common import read_body
from gateway.errors import GatewayError, render
from gateway.formats import chat
from gateway.formats.chat.render import completion_body
from gateway.mcp import message
from gateway.mcp.remote import Refused
from gateway.mcp.tools import Progress, build_server
from gateway.panel.run import PanelEnded, SeatFinished
from gateway.panel.seating import admitted, start_panel
from gateway.records.pending import pending
from gateway.records.verdicts import check_verdict, judge
from gateway.request.client import Client
from gateway.runtime import Runtime

CLIENT = "bench.client"  # where the endpoint leaves the caller's Client in the request scope
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class LocalBench:
    """The tools' Bench inside the gateway: one tool call, for the key that sent it."""

    def __init__(self, request: Request, client: Client) -> None:
        self.request = request
        self.runtime: Runtime = request.app.state.runtime
        self.client = client

    async def collections(self) -> list[dict[str, Any]]:
        from gateway.endpoints.models import listed  # (endpoints lists the /mcp route)

        return listed(self.request, self.client)

    async def ask(
        self, body: dict[str, Any], headers: dict[str, str], progress: Progress
    ) -> dict[str, Any]:
        runtime = self.runtime

        try:
            with admitted(runtime) as ticket:
                raw = json.dumps(body).encode()
                checked = await runtime.bodies.read(raw, chat.check)  # as every route reads
                ask = chat.read(checked, headers, runtime.config)
                run = await start_panel(runtime, self.client, ask, ticket)
        except GatewayError as error:
            raise Refused(error.message) from None
        total, done = len(run.facts.plan.seats), 0
        await progress(0, total, f"panel {run.panel_id}: {total} seats thinking")
        async for event in run.events():
            if isinstance(event, SeatFinished):
                seat = event.seat
                if seat.replaced_by is None:  # a seat handed to a reserve is not done yet
                    done += 1
                await progress(min(done, total), total, f"{seat.seat} ({seat.alias}) {seat.status}")
            elif isinstance(event, PanelEnded):
                if event.error is not None:
                    raise Refused(event.error.message, event.error.extra.get("bench"))
                assert event.completion is not None
                return completion_body(event.completion)
        raise Refused("The panel ended without a result.")  # events() always ends with one

    async def verdict(self, verdict: dict[str, Any]) -> dict[str, Any]:
        try:
            checked = check_verdict(verdict, self.runtime.config.gateway)
            written, _ = await judge(
                self.runtime, checked, by=self.client.name, owner=self.client.owner
            )
        except GatewayError as error:
            raise Refused(error.message) from None
        return {"call": checked["call"], "recorded": written}

    async def pending(self, calls: list[str]) -> dict[str, Any]:
        return await pending(self.runtime, self.client, calls)


def bench_of(ctx: Context) -> LocalBench:
    request = ctx.request_context.request
    assert isinstance(request, Request), "the gateway's MCP tools are served over HTTP"
    return LocalBench(request, request.scope[CLIENT])


def transport_security(config: Config) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check, given the names the gateway's guard allows."""
    hosts = [f"{name}:*" for name in LOOPBACK] + list(LOOPBACK)
    for entry in config.gateway.allowed_hosts:
        hosts += [entry] if ":" in entry.strip("[]").rpartition("]")[2] else [entry, f"{entry}:*"]
    origins = [f"{scheme}://{name}:*" for scheme in ("http", "https") for name in LOOPBACK]
    origins += [f"{scheme}://{name}" for scheme in ("http", "https") for name in LOOPBACK]
    origins += list(config.gateway.allowed_origins)
    public = config.gateway.public_url
    if public:
        parts = urlsplit(public)
        netloc = parts.netloc.rpartition("@")[2]
        hosts.append(netloc)
        origins.append(f"{parts.scheme}://{netloc}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


@contextlib.contextmanager
def root_logging_kept() -> Iterator[None]:
    """The root logger's handlers and level as they were before: the SDK's server configures
    them when built (`logging.basicConfig` at INFO with a rich handler), and an app must leave
    its process's logging to the process owner. Left at INFO, every litellm call also logged a
    line of its own, rendered by rich: about an eighth of a worker's CPU under load."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)


class McpEndpoint:
    """The ASGI endpoint at /mcp: the caller's key checked, the body read within the gateway's
    limits of size and time and checked to be a message (gateway/mcp/message.py), then the
    SDK's session manager."""

    def __init__(self, config: Config) -> None:
        with root_logging_kept():
            self.server = build_server(bench_of)
        # Built for its session manager; the app it returns is not mounted (its lifespan would
        # never run): the gateway routes /mcp here and runs the manager in its own lifespan.
        # Stateless: each request stands alone (progress still streams on the POST's own
        # reply), so a gateway's workers can each serve any request of any client.
        self.server.streamable_http_app(
            stateless_http=True,
            transport_security=transport_security(config),
            max_request_body_size=config.gateway.max_body_bytes,
        )
        self.manager: StreamableHTTPSessionManager = self.server.session_manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        runtime: Runtime = request.app.state.runtime
        try:
            client = await runtime.keys.client(request)
        except GatewayError as error:
            return await render(error)(scope, receive, send)
        scope[CLIENT] = client
        try:
            raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        except GatewayError as error:
            return await render(error)(scope, receive, send)
        wrong = message.refusal(raw)
        if wrong is not None:
            refused = Response(message.error_body(wrong), 400, media_type="application/json")
            return await refused(scope, receive, send)
        await self.manager.handle_request(
            _typed_json(scope), _replayed(raw, receive), _no_type_on_202(send)
        )


def _typed_json(scope: Scope) -> Scope:
    """The guard took the body as JSON (no `Content-Type`, or an `application/*+json` one, as on
    every route); the SDK, told so, answers it rather than refusing it in plain text."""
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-type"]
    return {**scope, "headers": [*headers, (b"content-type", b"application/json")]}


def _replayed(raw: bytes, receive: Receive) -> Receive:
    """The body read here, handed to the SDK as if it came now; then the client's own events
    (its disconnect)."""
    pending = [{"type": "http.request", "body": raw, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def _no_type_on_202(send: Send) -> Send:
    """The SDK answers a notification 202 with no body but `Content-Type: application/json`,
    a body its type does not describe: the header is dropped."""

    async def sending(event: Message) -> None:
        if event["type"] == "http.response.start" and event["status"] == 202:
            headers = [(k, v) for k, v in event["headers"] if k.lower() != b"content-type"]
            event = {**event, "headers": headers}
        await send(event)

    return sending

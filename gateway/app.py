"""The app factory. Shared clients and the store open in the lifespan, never at import time.

The app leaves the process as it found it: GC tuning, the switch interval, litellm's offline
environment and logging belong to whoever owns the process (gateway/serve/process.py, called by the
CLI)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.access.guard import Guard
from gateway.access.masked import MaskedResponses
from gateway.access.sessions import Access, SessionRoot
from gateway.board import Board
from gateway.config.settings import Config
from gateway.dashboard import page as dashboard
from gateway.endpoints.routes import ROUTES as API_ROUTES
from gateway.errors import BadRequest, GatewayError, NotFound, RecordsUnavailable
from gateway.formats.by_path import error_renderer_for
from gateway.health import Health
from gateway.mcp.http import McpEndpoint
from gateway.panel.probe import keep_probing
from gateway.records.listings import keep_reading
from gateway.runtime import Runtime
from gateway.state import quota_signals
from gateway.store.interface import RecordStore
from gateway.store.open import open_store
from gateway.suite.service import Suite
from gateway.upstream.seam import Upstream, UpstreamSeam

log = logging.getLogger("bench.app")


def create_app(
    config: Config,
    *,
    store: RecordStore | None = None,
    upstream: Upstream | None = None,
    clock: Callable[[], float] | None = None,
    board: Board | None = None,
) -> Starlette:
    """*upstream*: the way out to the providers; litellm's own (opened and closed with the app)
    if none is given. *board*: the one a gateway's workers share (gateway/serve/workers.py);
    else one of its own."""
    way_out = UpstreamSeam() if upstream is None else None
    health = Health()
    if store is None:
        store = open_store(
            config.store,
            spill_dir=config.spill_dir,
            spill_max_bytes=int(config.gateway.spill_max_mb * 1_000_000),
            health=health,
        )
    runtime = Runtime(
        config=config,
        store=store,
        upstream=upstream or cast(UpstreamSeam, way_out),
        clock=clock or time.time,
        board=board,
        health=health,
    )

    suite = Suite(runtime)  # its tasks read (and a bad file named) at start
    mcp = McpEndpoint(config)
    # Stateless MCP: no stream to GET and no session to DELETE, so those are 405 (as the
    # transport allows), POST only.
    mcp_route = Route("/mcp", mcp, methods=["POST"])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await runtime.store.open()
        try:
            await _load_figures(runtime)
        except BaseException:
            await runtime.store.close()  # (spilled rows stay on disk for the next start)
            raise
        await runtime.live.start()  # with Redis: seeded from the board, or the board from it
        if way_out is not None:
            await way_out.open(
                [m.served for m in config.catalog.models],
                {m.served: config.reader(m.alias) for m in config.catalog.models},
            )
        await suite.publish()  # the suite's figures where routing reads them (contract §20)
        runtime.ready = True
        prober = asyncio.create_task(keep_probing(runtime))  # due probes only (contract §18)
        reader = asyncio.create_task(keep_reading(runtime))  # the listings (contract §19)
        scheduled = asyncio.create_task(suite.keep_scheduled())  # suite.schedule_s (§20)
        try:
            async with mcp.manager.run():  # the MCP sessions' task group (gateway/mcp/http.py)
                yield
        finally:
            runtime.ready = False
            for background in (prober, reader, scheduled):
                background.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await background
            await suite.stop()
            await _drain(runtime, config.gateway.drain_timeout_s)
            await runtime.live.close()
            await runtime.bodies.close()
            if way_out is not None:
                await way_out.close()
            await runtime.store.close()

    routes = [*API_ROUTES, *dashboard.ROUTES, mcp_route]
    app = _Gateway(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            *_forwarded(config),
            Middleware(MaskedResponses, mask=runtime.secrets),  # (the net under the sources')
            Middleware(
                Guard, routes=routes, error_renderer_for=error_renderer_for, **_web_access(config)
            ),
            Middleware(SessionRoot),  # a signed-in dashboard's own path (access/sessions.py)
        ],
        exception_handlers={
            GatewayError: _gateway_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )
    app.router.redirect_slashes = False  # a stray slash is a 404, not a bare redirect
    app.state.runtime = runtime
    app.state.suite = suite
    app.state.access = Access.from_environment(
        config.gateway.require_keys, runtime.clock, runtime.board
    )
    return app


async def _load_figures(runtime: Runtime) -> None:
    """The live figures from the records, unless the board already holds them (a worker
    started again finds them live, and so can start while the store cannot be reached; a
    gateway starting afresh cannot seat without them, and fails naming why)."""
    config = runtime.config
    try:
        if not runtime.figures.loaded:
            standings = await runtime.store.standings()
            runtime.figures.load(standings, await runtime.store.learned_windows())
        if not runtime.rate_limits.loaded:  # the day's counts and learned cooldowns survive
            now = runtime.clock()
            since = quota_signals.day_start(now, config.gateway.quota_day_tz)
            runtime.rate_limits.load(
                await runtime.store.day_counts(since), await runtime.store.learned_limits(now)
            )
        book = runtime.model_health.book
        if not book.loaded:  # benched and retired models stay so across a restart
            book.load((await runtime.store.health_rows())[0])
        runtime.model_health.unready(config.unready)
    except RecordsUnavailable:
        log.error(
            "cannot start: the record store is unreachable, and the standings, day counts and "
            "learned limits panels are seated by are read from it (%s)",
            runtime.health.faults.get("store", "see above"),
        )
        raise


def _web_access(config: Config) -> dict[str, Any]:
    """Who the guard lets in (contract §14), from the config's `gateway:` settings."""
    names = ("allowed_hosts", "allowed_origins", "public_url")
    return {name: getattr(config.gateway, name) for name in names}


def _forwarded(config: Config) -> list[Middleware]:
    """X-Forwarded-For and -Proto believed from `gateway.trusted_proxies` only. uvicorn is told
    to believe none (gateway/serve/); left to itself it believes any from 127.0.0.1, so every
    local process could name whatever client address it liked (the sign-in throttle counts by
    it)."""
    trusted = config.gateway.trusted_proxies
    if not trusted:
        return []
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    return [Middleware(ProxyHeadersMiddleware, trusted_hosts=list(trusted))]


async def _drain(runtime: Runtime, timeout: float) -> None:
    """Let running panels finish (and be recorded) before the store closes."""
    if not runtime.panels:
        return
    _, pending = await asyncio.wait(set(runtime.panels), timeout=timeout)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)


# Errors no format's reader caught are rendered in the format of the path called (an Anthropic
# client's 404 is Anthropic-shaped), by gateway/formats' error_renderer_for.


async def _gateway_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    return error_renderer_for(request.url.path)(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    render = error_renderer_for(request.url.path)
    if exc.status_code == 404:
        return render(NotFound(f"No route {request.url.path}."))
    error = BadRequest(str(exc.detail), headers=dict(exc.headers or {}))  # a 405's Allow
    error.status = exc.status_code
    return render(error)


class _Gateway(Starlette):
    """Starlette, with an unexpected error logged once. Its outermost layer sends the 500 (from
    `_unexpected`, which logs the error) and then raises the error again for the server to log:
    a second full traceback of the same error, in uvicorn's words. Here it stops at the app,
    logged once: by `_unexpected`, or here when the reply had already begun."""

    def build_middleware_stack(self) -> ASGIApp:
        return _LoggedOnce(super().build_middleware_stack())


class _LoggedOnce:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)  # (a failing lifespan still fails)
        try:
            await self.app(scope, receive, send)
        except Exception:
            if not scope.get(_LOGGED):
                log.exception("unexpected error on %s (after its reply began)", scope["path"])


_LOGGED = "bench.error_logged"


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s", request.url.path)
    request.scope[_LOGGED] = True
    error = GatewayError("The gateway failed unexpectedly; the error is logged.")
    return error_renderer_for(request.url.path)(error)

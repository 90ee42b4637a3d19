"""Reloading the config in a running `serve` process: a new app on the new config is started
beside the running one and swapped in; the old one finishes what it has in flight, then closes.

Why in the process, not by restarting it: a restart closes the listening socket, and every
connection the kernel had queued on it is reset, and the requests in flight are cut or waited
for with nobody serving. Here the socket and the server stay; each request goes to the app of
the moment, so a reload is invisible to clients: panels, streams and route turns in flight end
on the app that began them, new ones start on the new one. The board (cooldowns, rpm windows,
figures, health, route conversations) is the same object for both apps, so what the bench has
learned stays for every model that stays (with Redis, both apps read it there).

A config that `check-config` refuses, or an app that fails to start on it, is not taken: one
line in the log, and `POST /bench/reload` answers the reason (`ConfigRefused`, 409). Workers of
`serve --workers N` do not swap apps themselves: the supervisor replaces them one at a time
(gateway/serve/workers.py), and a worker's `POST /bench/reload` checks the file, then hands the
reload to it (`handoff`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.applications import Starlette

from gateway.board import Board
from gateway.config.changes import Changes, changes
from gateway.config.settings import Config, ConfigError, load_config
from gateway.errors import ConfigRefused
from gateway.panel.onboard import LONGEST_WAIT_S, onboard

log = logging.getLogger("bench.reload")

Build = Callable[[Config], Starlette]


def load_checked(path: str) -> Config:
    """The config at *path* if `check-config` takes it, else `ConfigRefused` naming why."""
    from gateway.upstream.providers import check_providers

    try:
        config = load_config(path)
        check_providers(config)
    except ConfigError as exc:
        problems = "; ".join(exc.problems)
        raise ConfigRefused(problems if path in problems else f"{path}: {problems}") from None
    return config


def takeable(config: Config, running: Config, board: Board | None) -> None:
    """`ConfigRefused` if *config* cannot replace *running* in this gateway: another store or
    live state (the figures, day counts and cooldowns were read from the running ones, and are
    kept), or more than the live state's board can hold (gateway/runtime.py)."""
    from gateway.runtime import board_fits

    moved = [name for name in ("store", "state") if getattr(config, name) != getattr(running, name)]
    if moved:
        raise ConfigRefused(
            f"config {config.path} changes {' and '.join(f'`{m}:`' for m in moved)}, which a "
            "gateway reads only when it starts: restart the gateway to take it"
        )
    why = board_fits(board, config) if board is not None else None
    if why is not None:
        raise ConfigRefused(f"config {config.path} cannot be taken: {why}")


class StartFailed(Exception):
    """An app's lifespan start-up failed; *message* is what it said (its traceback's text)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Running:
    """One app, its lifespan driven here, and the requests it has in flight."""

    def __init__(self, app: Starlette, config: Config, onboarding: tuple[str, ...] = ()) -> None:
        self.app, self.config, self.onboarding = app, config, onboarding
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = asyncio.Event()
        self._lifespan: asyncio.Task[None] | None = None
        self._onboard: asyncio.Task[None] | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        started: asyncio.Future[None] = loop.create_future()
        said: list[str] = []
        asked = False

        async def receive() -> dict[str, Any]:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "lifespan.startup"}
            await self._stopping.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "lifespan.startup.complete":
                started.set_result(None)
            elif message["type"] == "lifespan.startup.failed":
                said.append(str(message.get("message") or ""))

        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}}
        self._lifespan = loop.create_task(self.app({**scope, "state": {}}, receive, send))
        await asyncio.wait({started, self._lifespan}, return_when=asyncio.FIRST_COMPLETED)
        if not started.done():
            started.cancel()
            failure = self._lifespan.exception() if self._lifespan.done() else None
            raise StartFailed(said[0] if said else repr(failure))
        if self.onboarding:  # new models on a running bench (contract §19)
            state = self.app.state
            quick_set = functools.partial(state.suite.onboard, wait_s=LONGEST_WAIT_S)
            onboarding = onboard(state.runtime, self.onboarding, quick_set)
            self._onboard = loop.create_task(onboarding, name="onboard")

    async def serve(self, scope: Any, receive: Any, send: Any) -> None:
        self.in_flight += 1
        self._idle.clear()
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            if not self.in_flight:
                self._idle.set()

    async def stop(self, wait_s: float = 0.0) -> None:
        """Let the requests in flight finish (up to *wait_s*), then end the lifespan, which
        drains the panels still running and closes the store."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), wait_s)
        if self._onboard is not None:
            self._onboard.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._onboard
        self._stopping.set()
        if self._lifespan is not None:
            try:
                await self._lifespan
            except Exception:
                log.exception("the replaced app did not close cleanly")


class Reloading:
    """ASGI: the gateway's app of the moment, replaced by `reload()`.

    *build*: a new app for a config (with this board, when the state is local). *handoff*: set
    in a worker of `serve --workers N`, which checks the file and then asks the supervisor to
    replace the workers, rather than swapping its own app."""

    def __init__(
        self,
        path: str,
        config: Config,
        build: Build,
        *,
        board: Board | None = None,
        onboarding: tuple[str, ...] = (),
        handoff: Callable[[], None] | None = None,
        workers: int = 1,
    ) -> None:
        self.path, self.build, self.board = path, build, board
        self.handoff, self.workers = handoff, workers
        self.current = Running(self._built(config), config, onboarding)
        self._retiring: set[asyncio.Task[None]] = set()
        self._lock: asyncio.Lock | None = None
        self._signalled: set[asyncio.Task[object]] = set()

    def _built(self, config: Config) -> Starlette:
        app = self.build(config)
        app.state.reload = self.reload  # POST /bench/reload (gateway/endpoints/reload.py)
        return app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        await self.current.serve(scope, receive, send)

    async def _lifespan(self, receive: Callable[[], Awaitable[Any]], send: Any) -> None:
        await receive()  # startup
        try:
            await self.current.start()
        except StartFailed as exc:  # as the app itself would have said it to the server
            await send({"type": "lifespan.startup.failed", "message": exc.message})
            return
        await send({"type": "lifespan.startup.complete"})
        await receive()  # shutdown: the server has stopped taking requests
        async with self._reloading():  # a reload under way ends first: its app is stopped too
            while self._retiring:
                await asyncio.wait(set(self._retiring))
            await self.current.stop()
        await send({"type": "lifespan.shutdown.complete"})

    async def reload(self) -> dict[str, Any]:
        """Take the file's config now; what changed, or `ConfigRefused` (logged, nothing
        changed)."""
        async with self._reloading():
            try:
                config = await asyncio.to_thread(load_checked, self.path)
                takeable(config, self.current.config, self.board)
                found = changes(self.current.config, config)
                if self.handoff is not None:
                    self.handoff()
                    log.info("Reload of %s asked: %s", self.path, found.summary())
                else:
                    await self._swap(config, found)
            except ConfigRefused as exc:
                log.error("Reload refused, the running config is kept: %s", exc.message)
                raise
        return {"reloaded": True, "config": self.path, **found.as_json(), "workers": self.workers}

    def _reloading(self) -> asyncio.Lock:
        """One reload at a time, and none under way when the server stops."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _swap(self, config: Config, found: Changes) -> None:
        try:
            new = Running(self._built(config), config, onboarding(config, found))
            await new.start()
        except StartFailed as exc:
            last = exc.message.strip().splitlines()[-1:] or ["see above"]
            raise ConfigRefused(f"the gateway failed to start on {self.path}: {last[0]}") from None
        except Exception as exc:  # building the app refused the config: named, not a 500
            raise ConfigRefused(f"the gateway failed to start on {self.path}: {exc}") from None
        old, self.current = self.current, new
        retiring = asyncio.get_running_loop().create_task(
            old.stop(old.config.gateway.drain_timeout_s), name="retire"
        )
        self._retiring.add(retiring)
        retiring.add_done_callback(self._retiring.discard)
        log.info("Reloaded %s: %s", self.path, found.summary())

    def hang_up(self) -> None:
        """SIGHUP (from the server's signal handler, on the loop's thread): reload; a refusal
        is logged by `reload`."""

        log.info("Received SIGHUP: reloading the config from %s.", self.path)

        async def reloading() -> None:
            with contextlib.suppress(ConfigRefused):
                await self.reload()

        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(reloading())
        self._signalled.add(task)
        task.add_done_callback(self._signalled.discard)


def onboarding(config: Config, found: Changes) -> tuple[str, ...]:
    """The new models to onboard: those added that can be called as configured."""
    return tuple(alias for alias in found.added if alias not in config.unready)

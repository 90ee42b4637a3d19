"""Probes: the gateway asking a model itself, one small call, when its health waits on it.

Why: a model whose 404 said it does not exist is only benched until a second failure of the
same class comes `lifecycle.confirm_after_s` later, and a retired one is asked again every
`lifecycle.reprobe_s` (contract §18); waiting for traffic would leave both to chance. A benched
model's trial is a probe too: a panel seats only models that are ok, so a trial that fails
never costs a panel a chair, and an answer makes the model ok for the next panel. A probe
goes through the same upstream path as a panel seat and is learned from in the one place
(gateway/state/learn.py): only a real answer counts (a bare 200 with no text is `empty`).

One probe at a time per model across the gateway's workers (a lease per model on the board),
one model at a time on a connection that is down, and only what is due: a gateway's first
start probes nothing unless a kept record says something is due.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING

from gateway.errors import UpstreamError
from gateway.state.learn import Answered

if TYPE_CHECKING:
    from gateway.runtime import Runtime

log = logging.getLogger("bench.probe")

PROMPT = [{"role": "user", "content": "Reply with the single word: ready"}]
TIMEOUT_S = 60.0
LEASE = "probe-lease"
MIN_EVERY_S, MAX_EVERY_S = 0.05, 1.0


async def probe(runtime: Runtime, alias: str) -> None:
    """Ask *alias* once and learn from how it ended."""
    before = runtime.model_health.book.of(alias)
    params = runtime.config.litellm_params[alias]
    timeout = min(runtime.config.gateway.seat_timeout_s or TIMEOUT_S, TIMEOUT_S)
    try:
        answer = await runtime.upstream.call(
            params, PROMPT, {}, timeout, reader=runtime.config.reader(alias)
        )
    except UpstreamError as exc:
        await runtime.learning.learn(alias, exc)
    else:
        text = runtime.scrub(answer.text) or ""
        empty = None if text.strip() else "empty"
        said = "the probe's answer had no text" if empty else None
        await runtime.learning.learn(alias, Answered(answer.headers, empty, said))
    if runtime.model_health.book.of(alias) == before:
        runtime.model_health.postpone(alias)
    await runtime.live.flush("health")


def start_due(runtime: Runtime, running: dict[str, asyncio.Task[None]]) -> list[str]:
    """Start a probe of every model due one that no worker is probing (a lease per model on
    the board), and on a connection that is down, of one of its models at a time; the models
    started. Each runs on its own, so a model that hangs delays no other's trial."""
    health = runtime.model_health
    due = health.probes_due()
    if not due:
        return []
    down = {name for name, state in health.connections().items() if state.health == "down"}
    busy = {health.connection_of[alias] for alias in running}
    started = []
    for alias in due:
        connection = health.connection_of[alias]
        if alias in running or (connection in down and connection in busy):
            continue
        if not _lease(runtime, alias):
            continue
        busy.add(connection)
        task = asyncio.create_task(_probe_leased(runtime, alias))
        running[alias] = task
        task.add_done_callback(functools.partial(_done, running, alias))
        started.append(alias)
    return started


def _done(running: dict[str, asyncio.Task[None]], alias: str, _: object) -> None:
    running.pop(alias, None)


async def _probe_leased(runtime: Runtime, alias: str) -> None:
    log.info("probing %s", alias)
    try:
        await probe(runtime, alias)
    except Exception:
        log.exception("the probe of %s failed unexpectedly", alias)
    finally:
        if runtime.board is not None:
            runtime.board.write(f"{LEASE}:{alias}", 0.0)


def _lease(runtime: Runtime, alias: str) -> bool:
    """Take *alias*'s probe lease (held for a probe's longest time, so a dead worker's lapses)."""
    board = runtime.board
    assert board is not None
    now, name = runtime.clock(), f"{LEASE}:{alias}"
    with board.locked():
        held = board.numbers(name)[0]
        if held > now:
            return False
        board.write(name, now + TIMEOUT_S * 4)
    return True


def cadence(runtime: Runtime) -> float:
    """How often to look for due probes, in real seconds: a fifth of the shortest backoff, so a
    trial comes close to its time whatever the `lifecycle:` times (once a second at the
    defaults, never more than twenty times a second)."""
    return min(max(runtime.config.lifecycle.backoff_min_s / 5, MIN_EVERY_S), MAX_EVERY_S)


async def keep_probing(runtime: Runtime, every_s: float | None = None) -> None:
    """The background task: look for due probes every *every_s* (real) seconds, by default
    at the lifecycle settings' cadence."""
    every_s = cadence(runtime) if every_s is None else every_s
    running: dict[str, asyncio.Task[None]] = {}
    try:
        while True:
            await asyncio.sleep(every_s)
            try:
                start_due(runtime, running)
            except Exception:
                log.exception("probing failed")
    finally:
        for task in list(running.values()):
            task.cancel()

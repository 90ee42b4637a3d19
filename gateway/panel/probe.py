"""Probes: the gateway asking a model itself, one small call, when its health waits on it.

Why: a model whose 404 said it does not exist is only benched until a second failure of the
same class comes `lifecycle.confirm_after_s` later, and a retired one is asked again every
`lifecycle.reprobe_s` (contract §18); waiting for traffic would leave both to chance. A benched
model's trial is a probe too: a panel seats only models that are ok, so a trial that fails
never costs a panel a chair, and an answer makes the model ok for the next panel. A probe
goes through the same upstream path as a panel seat and is learned from in the one place
(gateway/state/learn.py): only a real answer counts (a bare 200 with no text is `empty`).

One round of probes at a time across the gateway's workers (a lease on the board), one probe at
a time per model (one per connection that is down), and only what is due: a gateway's first
start probes nothing unless a kept record says something is due.
"""

from __future__ import annotations

import asyncio
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
    await runtime.live.flush()


async def probe_due(runtime: Runtime) -> list[str]:
    """Probe every model due one, if this worker holds the lease; the models probed."""
    due = runtime.model_health.probes_due()
    if not due or not _lease(runtime):
        return []
    try:
        await asyncio.gather(*(_probe_logged(runtime, alias) for alias in due))
    finally:
        if runtime.board is not None:
            runtime.board.write(LEASE, 0.0)
    return due


async def _probe_logged(runtime: Runtime, alias: str) -> None:
    log.info("probing %s", alias)
    try:
        await probe(runtime, alias)
    except Exception:
        log.exception("the probe of %s failed unexpectedly", alias)


def _lease(runtime: Runtime) -> bool:
    """Take the probe lease (held for a probe's longest time, so a dead worker's lapses)."""
    board = runtime.board
    assert board is not None
    now = runtime.clock()
    with board.locked():
        held = board.numbers(LEASE)[0]
        if held > now:
            return False
        board.write(LEASE, now + TIMEOUT_S * 4)
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
    while True:
        await asyncio.sleep(every_s)
        try:
            await probe_due(runtime)
        except Exception:
            log.exception("probing failed")

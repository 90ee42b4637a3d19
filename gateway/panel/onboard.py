"""Onboarding: a model brought onto a running bench is asked by the gateway itself, once, so its
health is known before a panel seats it, then given the suite's quick set, so the router has
evidence of it before anyone judges it (contract §19, §20).

Why: a model new in a reloaded config has no record at all; if its slug is wrong or its key
refused, the first panels that seat it as an explorer find out, one wasted chair each. A probe
finds out first, and is learned from as any call is (gateway/panel/probe.py).

Within its limits: the probe takes a permit as a seat does (its rpm caps, its connection's,
its cooldown); a model over its cap waits for a slot. The quick set is a suite run, which keeps
to `suite.share` of those limits and skips a model the probe found benched; while another run
holds the suite's lock (one at a time across workers and replicas) it waits for it. Only models
that are new on a running gateway are onboarded: a gateway's first start asks nobody on its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from gateway.panel.probe import probe
from gateway.state.limits import Refused

if TYPE_CHECKING:
    from gateway.runtime import Runtime

log = logging.getLogger("bench.onboard")

LONGEST_WAIT_S = 3600.0  # a model that stays over its limits this long is left to traffic
RETRY_S = 5.0  # how often a model cooling with no stated end is asked about again


# The suite's quick set for models (gateway/suite/service.py `Suite.onboard`, waiting for the
# lock while another run holds it): the run's id, or None when it was not started.
QuickSet = Callable[[list[str]], Awaitable["str | None"]]


async def onboard(
    runtime: Runtime, aliases: Iterable[str], quick_set: QuickSet | None = None
) -> None:
    """Onboard *aliases* (the background task of a reloaded app): one probe each, in turn, then
    the suite's quick set for them all (*quick_set*; none without it)."""
    wanted = list(aliases)
    for alias in wanted:
        try:
            if await _within_limits(runtime, alias):
                log.info("onboarding %s: one probe", alias)
                await probe(runtime, alias)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("onboarding %s failed unexpectedly", alias)
    if quick_set is not None and wanted:
        try:
            started = await quick_set(wanted)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("onboarding %s: the quick set failed to start", ", ".join(wanted))
            return
        if started is not None:
            log.info("onboarding %s: the suite's quick set, run %s", ", ".join(wanted), started)


async def _within_limits(runtime: Runtime, alias: str) -> bool:
    """Wait until *alias* may be called; False if it may not within `LONGEST_WAIT_S`. The
    permit is handed back at once: the probe is one call, counted as the seat's is."""
    waited = 0.0
    while waited < LONGEST_WAIT_S:
        permit = await runtime.live.acquire(alias)
        if not isinstance(permit, Refused):
            permit.release()
            return True
        wait = min(max(permit.frees_in or RETRY_S, 0.1), LONGEST_WAIT_S - waited)
        await asyncio.sleep(wait)
        waited += wait
    log.info("onboarding %s: still over its limits after %.0f s, left to traffic", alias, waited)
    return False

"""What only the owner of a process may set: environment defaults, the GIL's switch interval,
the cyclic GC's thresholds, and where our logs go.

The owner is the command that starts a server: `bench-gateway serve` (and each of its worker
processes), `demo` and `simulate`. Neither importing `gateway` nor `create_app` touches any of
this, so an app embedded in someone else's process, and the test run, keep their interpreter as
they set it up. Whoever embeds the app sets litellm's offline environment (`ENVIRONMENT`) before
importing `gateway.app`, as the tests' conftest does.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

ENVIRONMENT = {
    # Before litellm is imported: no price-map download, no model-hub lookups. (litellm otherwise
    # spends seconds at import trying the network, and some token counters block on a model hub.)
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    # litellm caps its own aiohttp pool at 500 connections per host: with many models on one
    # provider host that silently queues seats in waves. (0 does not mean unlimited: litellm then
    # passes no limit and aiohttp applies its own 100.) The panel size already bounds our calls.
    "AIOHTTP_CONNECTOR_LIMIT": "100000",
    "AIOHTTP_CONNECTOR_LIMIT_PER_HOST": "100000",
}


def set_environment() -> None:
    """Defaults only: a value the user exported wins."""
    for name, value in ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def own() -> None:
    """Everything a server process sets before it imports litellm or builds an app."""
    set_environment()
    share_the_interpreter()
    log_to_stderr()


_HUNG_UP: list[int] = []  # SIGHUPs held while `serve` starts


def hold_hang_ups() -> None:
    """From now until the server takes SIGHUP over, a SIGHUP is kept (`hung_up_while_starting`)
    rather than the end of the process. Left to its default, a reload asked while `serve` was
    still starting (seconds: litellm's import, the store) killed the gateway."""
    signal.signal(signal.SIGHUP, lambda signum, frame: _HUNG_UP.append(signum))


def hung_up_while_starting() -> bool:
    """Whether a SIGHUP came while starting (then forgotten): the config is read again once the
    gateway serves."""
    heard = bool(_HUNG_UP)
    _HUNG_UP.clear()
    return heard


def share_the_interpreter() -> None:
    """Hand the GIL between threads every 0.5 ms instead of 5 ms. The record writer thread
    holds SQLite's write lock while it waits for the GIL between its statements; with the event
    loop busy and the default interval, one batch could keep the store locked for seconds and
    stall every other worker's seats (at 100 concurrent panels: slowest 10-17 s, 1.4 s after)."""
    sys.setswitchinterval(0.0005)


def tune_the_collector() -> None:
    """Keep the cyclic GC off what start-up built, and off calls in flight.

    litellm and its SDKs leave ~370,000 objects that live as long as the process; a full
    collection walking them all took ~120 ms here, a pause any panel caught in it would wear.
    Frozen, collections walk only newer objects. Then a burst: 1,000 panels at once put 2,500
    calls in flight per worker, and with the default thresholds each worker ran 7 full
    collections in the first 10 s (1.1-1.8 s of pauses) that freed nothing, since every object
    they walked belonged to a call still waiting on its answer. With a young generation of
    50,000 objects none ran until the burst was over, and the gateway spent 5.6 ms of CPU per
    seat instead of 5.9-6.2 (`benchmarks/load.py --workers 2`). Cycles are still collected,
    less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)


class AfterStartup:
    """Wraps an ASGI app: once its lifespan start-up is done (litellm imported and warmed up, the
    store open), calls *then*, before the server is told it may take requests. The collector is
    frozen there, so that what the warm-up built is frozen too."""

    def __init__(
        self,
        app: Callable[[Any, Any, Any], Awaitable[None]],
        then: Callable[[], None] = tune_the_collector,
    ) -> None:
        self.app = app
        self.then = then

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            return await self.app(scope, receive, send)

        async def sending(message: Any) -> None:
            if message["type"] == "lifespan.startup.complete":
                self.then()
            await send(message)

        await self.app(scope, receive, sending)


def log_to_stderr(level: int = logging.INFO) -> None:
    """The `bench.*` loggers to stderr, in uvicorn's own format, so a server's lines read as one
    log. Once per process (a worker process calls it again for itself)."""
    from uvicorn.logging import DefaultFormatter

    logger = logging.getLogger("bench")
    if any(getattr(h, "bench_gateway", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(DefaultFormatter("%(levelprefix)s %(message)s", use_colors=False))
    handler.bench_gateway = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False

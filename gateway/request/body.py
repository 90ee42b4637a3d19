"""Reading a request body into checked JSON without holding the event loop.

Python's JSON parser holds the GIL, so a thread does not help: a 17 MB body of 1.5 M
`logit_bias` keys held the loop for seconds, and every other client (health checks included)
waited. So a body is first sized up at C speed: one whose length, or whose count of `,` `[` `{`
(more than the number of JSON values it can hold), could take long is parsed and checked in a
child process, which hands back the checked (and so bounded) body or the refusal; any other body
is parsed on the loop, where it costs a few milliseconds at most. Either way the same checks run,
so a body gets the same answer wherever it was read.

The child is started on the first heavy body (most gateways never see one) and ended with the
app. A child that dies (out of memory, killed) costs that request a 413, and the next heavy
body gets a new child. A gateway that dies without ending it (`kill -9`, the OOM killer) would
leave it running, with multiprocessing's resource tracker beside it, for good: so the child
watches its parent and ends itself once it is gone (and the tracker, its last user gone, ends
with it).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from gateway.config.schema import GatewaySettings
from gateway.errors import GatewayError, PayloadTooLarge
from gateway.request.bounds import json_object

# Beyond either, a body is read off the loop. Measured here: a 1 MB body parses and is checked in
# ~5-15 ms, 10,000 values in ~1-15 ms; a 20 MB string took ~50 ms to parse, 1.5 M keys 2.6 s.
HEAVY_BYTES = 1_000_000
HEAVY_VALUES = 10_000
WATCH_S = 0.5  # how often the child looks for its parent

# A format's check: the parsed body and the gateway's settings -> the body as that format reads
# it, every part bounded, or a GatewayError. It must pickle by name (a module-level function, or
# a `functools.partial` of one) from a module that does not import litellm: the child imports
# it, and litellm would cost it seconds and hundreds of megabytes.
Check = Callable[[dict[str, Any], GatewaySettings], dict[str, Any]]
Checked = TypeVar("Checked")  # what a check returns (the door's says which path, too)


def heavy(raw: bytes) -> bool:
    """Could parsing *raw* take long? Every JSON value but the first follows a `,` or opens a
    container, so the counts bound the values from above (commas inside strings only inflate
    it, which sends a body off the loop it did not need to leave, never the other way)."""
    if len(raw) > HEAVY_BYTES:
        return True
    return raw.count(b",") + raw.count(b"[") + raw.count(b"{") > HEAVY_VALUES


def read_checked(
    raw: bytes,
    check: Callable[[dict[str, Any], GatewaySettings], Checked],
    settings: GatewaySettings,
) -> Checked:
    """Strict JSON, then the format's check: what runs on the loop for an ordinary body."""
    return check(json_object(raw), settings)


def _read_in_child(
    raw: bytes, check: Callable[[dict[str, Any], GatewaySettings], Any], settings: GatewaySettings
) -> tuple[Any, ...]:
    """In the child: the checked body, or the refusal as (class, message, param) to raise."""
    try:
        return ("ok", read_checked(raw, check, settings))
    except GatewayError as error:
        return ("refused", type(error), error.message, error.param)


def _watch_parent(parent: int) -> None:
    """In the child, as it starts: a thread that ends the child once *parent* is no longer its
    parent (it died, and the child was handed to init or a subreaper)."""
    threading.Thread(target=_end_when_orphaned, args=(parent,), daemon=True).start()


def _end_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_S)
    os._exit(0)  # (from a thread only os._exit ends the process; it holds nothing to flush)


class BodyReader:
    """Reads bodies for one app (one per worker): ordinary ones inline, heavy ones in a child."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self._pool: ProcessPoolExecutor | None = None

    async def read(
        self, raw: bytes, check: Callable[[dict[str, Any], GatewaySettings], Checked]
    ) -> Checked:
        if not heavy(raw):
            return read_checked(raw, check, self.settings)
        pool = self._started()
        loop = asyncio.get_running_loop()
        try:
            answer = await loop.run_in_executor(pool, _read_in_child, raw, check, self.settings)
        except BrokenProcessPool:
            self._pool = None  # the next heavy body starts another child
            pool.shutdown(wait=False)
            raise PayloadTooLarge(
                "The request body could not be read within the gateway's limits."
            ) from None
        if answer[0] == "refused":
            _, kind, message, param = answer
            raise kind(message, param=param)
        checked: Checked = answer[1]
        return checked

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")  # no fork of a threaded server
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=spawn,
                initializer=_watch_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    async def close(self) -> None:
        """End the child, if one was started (it finishes the body it is reading first)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

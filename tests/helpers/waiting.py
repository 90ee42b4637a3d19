"""Waiting on a served gateway from a test: until something holds, and what `/healthz` says."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(what: str, done: Callable[[], bool], within: float = 120.0) -> None:
    """Until *done*; *within* only bounds a test that would otherwise hang."""
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what}")
        time.sleep(0.05)


def health(gw) -> dict:
    return gw.http.get("/healthz").json()

"""A model whose life changes on the simulator's clock: `timeline` phases and `fail_every`.

Why: a provider's models come and go over weeks (a slug withdrawn, a free period ended, a key
revoked and fixed, an hour's outage), and a gateway's answer to that can only be measured when
the upstream plays it out on one clock, the same for every run. A `timeline` is a list of
phases, each `{"at_s": seconds since the behaviour was set, ...behaviour keys}`; from its
`at_s` on, a phase's keys lie over the model's own (a phase with no other key is the model as
its own keys say: it came back). `fail_every: n` lets the faults strike only every n-th request
since the behaviour was set (a flaky model failing one call in n), the same every run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Behaviour = dict[str, Any]


def check(timeline: list[Any], validate: Callable[[Any], Behaviour]) -> None:
    """Raise ValueError unless *timeline* is phases in time order, each a valid behaviour."""
    last = -1.0
    for phase in timeline:
        if not isinstance(phase, dict):
            raise ValueError(f"a timeline phase must be a mapping, got {phase!r}")
        at = phase.get("at_s")
        if isinstance(at, bool) or not isinstance(at, int | float) or at < 0:
            raise ValueError(f"a timeline phase needs at_s, seconds >= 0, got {phase!r}")
        if at <= last:
            raise ValueError(f"timeline phases must come in time order, got at_s {at} after {last}")
        if "timeline" in phase:
            raise ValueError("a timeline phase cannot hold a timeline of its own")
        validate({k: v for k, v in phase.items() if k != "at_s"})
        last = at


def in_force(own: Behaviour, elapsed: float | None) -> Behaviour:
    """*own* as it is *elapsed* seconds after it was set: the last phase begun over its keys."""
    phases = own.get("timeline") or []
    begun = [p for p in phases if elapsed is not None and elapsed >= p["at_s"]]
    if not begun:
        return own
    return {**own, **{k: v for k, v in begun[-1].items() if k != "at_s"}}


def spared(every: int | None, attempt: int) -> bool:
    """Is request number *attempt* (since the behaviour was set) spared the faults?"""
    return every is not None and attempt % every != 0

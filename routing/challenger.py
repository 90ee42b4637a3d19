"""Who may take the primary chair on the strength of the suite alone (a model nobody has judged
on the shape), read by routing/choose.py when it seats the primary. Pure."""

from __future__ import annotations

from collections.abc import Callable

from routing.catalog import Model
from routing.evidence import Evidence


def suite_challenger(
    evidence: Evidence,
    shape: str,
    proven: list[Model],
    primary: Model,
    staleness: Callable[[Model], tuple[float, int, int]],
) -> Model | None:
    """A model nobody has judged on the shape is ranked by its suite (contract §20); its few
    pseudo-verdicts alone could never outrank an incumbent's many verdicts, however much better
    its suite. So the best unjudged model takes the chair when its suite, every answer counted,
    is surely better than each kind of evidence the primary has: the primary's own suite score
    (equal terms: 8 of 8 over 7 of 8, 32 of 32 over 8 of 8) and its verdicts' lower bound. Its
    first verdicts then rank it as any other. No suite score for the primary: the verdicts decide,
    as before the suite."""
    bar = evidence.suite_bound_on(primary.alias, shape)
    if bar is None:
        return None
    unjudged = [
        m
        for m in proven
        if m is not primary
        and evidence.of(m.alias).judged_on(shape) == 0
        and evidence.suite_bound_on(m.alias, shape) is not None
    ]
    best = max(
        unjudged,
        key=lambda m: (evidence.suite_bound_on(m.alias, shape) or 0.0, _negated(staleness(m))),
        default=None,
    )
    if best is None:
        return None
    claim = evidence.suite_bound_on(best.alias, shape) or 0.0
    verdicts = evidence.of(primary.alias).bounds_on(shape)[0]
    return best if claim > bar and claim > verdicts else None


def _negated(key: tuple[float, int, int]) -> tuple[float, int, int]:
    return (-key[0], -key[1], -key[2])

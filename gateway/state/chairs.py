"""Explorer chairs when replicas race: who else could sit in them, and the panel once they are
given.

Two replicas seating at the same moment both see the same models as stalest; the one whose step
runs second would seat them again. So a seating brings routing's candidates in its own order:
the explorers it chose, then the ones routing would choose were those already seated; the step
(gateway/state/live.lua) gives each chair to the first candidate no replica seated since this
replica's board heard, one per family. Routing stays the only judge of who is stalest.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from routing import Catalog, Evidence, Panel, Seat


def explorer(chair: Seat, nominees: tuple[str, ...]) -> bool:
    """An explorer chair routing filled by rotation (not one a caller nominated)."""
    return chair.name.startswith("explorer") and chair.alias not in nominees


def as_seated(evidence: Evidence, aliases: list[str], now: float) -> Evidence:
    """The evidence as if *aliases* had just been seated (to ask routing who would be next)."""
    standings = dict(evidence.standings)
    latest = max((s.last_seated or 0.0 for s in standings.values()), default=0.0)
    just = max(now, latest) + 1.0  # after every seating known, whatever the clocks said
    for alias in aliases:
        was = evidence.of(alias)
        standings[alias] = dataclasses.replace(was, last_seated=just, seated=was.seated + 1)
    return dataclasses.replace(evidence, standings=MappingProxyType(standings))


def with_explorers(plan: Panel, chairs: list[Seat], picked: list[str]) -> Panel:
    """*plan* with its explorer *chairs* given to *picked* (in order); reserves kept apart."""
    given = {chair.name: alias for chair, alias in zip(chairs, picked, strict=True)}
    seats = tuple(dataclasses.replace(s, alias=given.get(s.name, s.alias)) for s in plan.seats)
    reserves = tuple(alias for alias in plan.reserves if alias not in picked)
    return dataclasses.replace(plan, seats=seats, reserves=reserves)


def family(catalog: Catalog, alias: str) -> str:
    model = catalog.model(alias)
    return model.family if model is not None else alias

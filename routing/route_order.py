"""The order in which route mode offers a turn to a collection's members. Pure: figures in, an
order out.

Why this order: an agent wants its best member every turn, so members go by useful verdicts,
their suite score counted as a few of them (ties keep the collection's order, which is the
owner's preference); a cooling member would only waste the turn's first try, so it goes last; a
conversation stays with the member that has it, since a new model mid-task has to re-read the
whole context and may answer in a different voice.
Alone, that loop would never give an unproven member a turn, so a new conversation sometimes
(`explore`, drawn by the caller) starts with the stalest member that is not cooling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MemberFigures:
    useful: int = 0
    # useful pseudo-verdicts from the member's suite score (routing/prior.py `pseudo_verdicts`):
    # an unjudged member ranks by its suite until its verdicts outnumber them
    prior: float = 0.0
    last_seated: float | None = None  # None: never seated, the stalest of all
    cooling: bool = False


def route_order(
    members: Sequence[str],
    figures: Mapping[str, MemberFigures],
    *,
    sticky: str | None = None,
    explore: bool = False,
) -> list[str]:
    """Members in the order to try them.

    *sticky*: the conversation's member, first unless it is cooling (then it keeps its place
    among the cooling). *explore*: a new conversation (no *sticky*) starts with the stalest
    member that is not cooling."""
    fresh = [m for m in members if not _fig(figures, m).cooling]
    cooling = [m for m in members if _fig(figures, m).cooling]
    ranked = sorted(fresh, key=lambda m: -_merit(figures, m))  # stable: ties keep order
    ranked += sorted(cooling, key=lambda m: -_merit(figures, m))
    if sticky is not None and sticky in fresh:
        ranked.remove(sticky)
        ranked.insert(0, sticky)
    elif sticky is None and explore and fresh:
        stalest = min(fresh, key=lambda m: _staleness(_fig(figures, m), fresh.index(m)))
        ranked.remove(stalest)
        ranked.insert(0, stalest)
    return ranked


def _fig(figures: Mapping[str, MemberFigures], alias: str) -> MemberFigures:
    return figures.get(alias) or MemberFigures()


def _merit(figures: Mapping[str, MemberFigures], alias: str) -> float:
    member = _fig(figures, alias)
    return member.useful + member.prior


def _staleness(figures: MemberFigures, position: int) -> tuple[float, int]:
    """Never seated first, then the longest since seated; ties keep the collection's order."""
    return (float("-inf") if figures.last_seated is None else figures.last_seated, position)

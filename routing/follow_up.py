"""Who the suite asks more after a quick set (adaptive follow-up, as adaptive testing does). Pure.

Why: a quick set is a few right-or-wrong answers, and a few cannot tell 0.97 from 0.90: several
models ace it, and the router would seat one of them by chance. So when a quick set ends, the
models that could still be the best on a shape (their suite interval reaches above the best
evidence's lower bound) are asked the rest of that shape's tasks, and the primary with them
when it has answered fewer, so the chair is decided on equal terms. Models surely behind cost
nothing more; each task is asked once per model, so the follow-up ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from routing.evidence import Evidence, wilson


@dataclass(frozen=True)
class Ask:
    """One follow-up run: these models, each asked these tasks (none answered before)."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]


def suite_interval(evidence: Evidence, alias: str, shape: str) -> tuple[float, float] | None:
    """Wilson's interval of the model's suite accuracy on *shape*, every answer counted."""
    score = evidence.score_on(alias, shape)
    if score is None or score[1] <= 0:
        return None
    accuracy, answered = score
    return wilson(min(max(accuracy, 0.0), 1.0) * answered, float(answered))


def primary_of(evidence: Evidence, shape: str, aliases: Sequence[str]) -> str | None:
    """The model the router ranks first on *shape* by its interval (verdicts and suite prior),
    among those something says is useful; None when nothing does."""
    proven = [a for a in aliases if evidence.proven_on(a, shape)]
    return max(proven, key=lambda a: evidence.bounds_on(a, shape)[0], default=None)


def contenders(evidence: Evidence, shape: str, aliases: Sequence[str]) -> list[str]:
    """The models that could be the best on *shape*: suite-scored ones whose upper bound is above
    the best lower bound there is (the surest suite score's, or the primary's verdicts'), and
    the primary itself; a model benched or retired is none of them (the router seats it
    nowhere). Empty when fewer than two: nobody to tell apart."""
    aliases = [a for a in aliases if evidence.of(a).unwell is None]  # not called: not asked
    intervals = {a: i for a in aliases if (i := suite_interval(evidence, a, shape)) is not None}
    if not intervals:
        return []
    primary = primary_of(evidence, shape, aliases)
    bar = max(low for low, _ in intervals.values())
    if primary is not None:
        bar = max(bar, wilson(*evidence.of(primary).recent_on(shape))[0])
    chosen = [a for a in aliases if a in intervals and intervals[a][1] > bar]
    if primary is not None and primary not in chosen:
        chosen.append(primary)  # the same tasks as its challengers: equal terms
    return chosen if len(chosen) >= 2 else []


def follow_up(
    evidence: Mapping[str, Evidence],
    tasks: Mapping[str, Sequence[str]],
    asked: Mapping[str, Set[str]],
    aliases: Sequence[str],
) -> list[Ask]:
    """The follow-up runs to start: each shape's contenders (its *evidence*) asked the shape's
    *tasks* they have not been *asked*; models missing the same tasks share a run, in the order
    of *aliases*. Empty: no one left to tell apart, or every contender answered everything."""
    missing: dict[str, list[str]] = {}
    for shape, ids in tasks.items():
        if shape not in evidence:
            continue
        for alias in contenders(evidence[shape], shape, aliases):
            done = asked.get(alias, frozenset())
            todo = missing.setdefault(alias, [])
            todo += [i for i in ids if i not in done and i not in todo]
    groups: dict[tuple[str, ...], list[str]] = {}
    for alias in aliases:
        if missing.get(alias):
            groups.setdefault(tuple(missing[alias]), []).append(alias)
    return [Ask(tuple(models), ids) for ids, models in groups.items()]

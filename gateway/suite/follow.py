"""What follows a quick set (contract §20's quick set, asked further where it matters): the
follow-up runs routing/follow_up.py names from the live evidence and the saved answers.

Why: a quick set of 8 right-or-wrong answers cannot tell 0.97 from 0.90, so the router would
seat one of several models that aced it by chance, and a strong newcomer could not show it beats
the primary. The models that could still be the best on a shape, and the primary beside them,
are asked the rest of its tasks, each task once per model; the rest of the bench costs nothing.
A follow-up is a run like any other (one at a time, within `suite.share`, listed in GET
/bench/suite), and its first note says what it follows.
"""

from __future__ import annotations

from collections.abc import Mapping

from gateway.runtime import Runtime
from gateway.suite.tasks import Task
from routing.follow_up import Ask, follow_up

# a follow-up run's first note, and the note of a run another follows (`bench-gateway suite run
# --quick` waits for each in turn by them)
FOLLOWS = "follow-up of run {origin}: the models that could be the best on a shape, asked its"
FOLLOWS += " other tasks"
LEADS = "a follow-up follows:"


async def plan(runtime: Runtime, by_id: Mapping[str, Task]) -> list[Ask]:
    """The follow-up runs the rule names now: from each shape's evidence (verdicts and the suite
    scores published), each shape's tasks, and which tasks each model has answered."""
    asked: dict[str, set[str]] = {}
    for row in await runtime.store.suite_answers():
        asked.setdefault(row["alias"], set()).add(row["task_id"])
    shapes: dict[str, list[str]] = {}
    for task_id in sorted(by_id):
        shapes.setdefault(by_id[task_id].shape, []).append(task_id)
    aliases = [m.alias for m in runtime.config.catalog.models]
    evidence = {shape: runtime.figures.evidence({}, shape, aliases=aliases) for shape in shapes}
    return follow_up(evidence, shapes, asked, aliases)


def planned_note(asks: list[Ask]) -> str:
    """What a run's row says of the follow-up it leads to."""
    said = "; ".join(f"{', '.join(a.models)} asked {len(a.tasks)} more task(s)" for a in asks)
    return f"{LEADS} {said}"

"""Each model's figures per shape, computed from its saved answers (contract §20): a corrected
key or scorer changes them at once, with no new call. Pure: answers and tasks in, figures out.

Each model's newest answer to each task counts once; an answer to a task no longer loaded
counts for nothing, and one with no verdict line is not scored (not `answered`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gateway.suite import asking
from gateway.suite.tasks import Task

NAMES = (
    "found", "of", "wrong_line", "clean", "false_alarms", "claims_right", "claims_of",
    "confidently_wrong", "accuracy", "answered", "scored_at",
)  # fmt: skip
_COUNT = {
    asking.FOUND: ("found", "of"),
    asking.WRONG_LINE: ("wrong_line", "of"),
    asking.MISSED: ("of",),
    asking.CLEAN: ("clean",),
    asking.FALSE_ALARM: ("false_alarms",),
    asking.RIGHT: ("claims_right", "claims_of"),
    asking.WRONG: ("claims_of",),
}


def empty() -> dict[str, Any]:
    return {name: 0 for name in NAMES} | {"accuracy": None, "scored_at": None}


def figures(
    answers: Iterable[Mapping[str, Any]], tasks: Mapping[str, Task]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{alias: {shape: figures}} from *answers* ({task_id, alias, answer, at}, each model's
    newest per task) scored against *tasks*."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for row in answers:
        task = tasks.get(row["task_id"])
        if task is None:
            continue
        outcome = asking.score(task, row["answer"])
        if outcome is None:
            continue
        shape = found.setdefault(row["alias"], {}).setdefault(task.shape, empty())
        for name in _COUNT[outcome]:
            shape[name] += 1
        shape["answered"] += 1
        shape["confidently_wrong"] += asking.confidently_wrong(task, outcome)
        at = row.get("at")
        if at is not None and (shape["scored_at"] is None or at > shape["scored_at"]):
            shape["scored_at"] = at
    for shapes in found.values():
        for shape in shapes.values():
            right = shape["found"] + shape["clean"] + shape["claims_right"]
            shape["accuracy"] = round(right / shape["answered"], 4)
    return found


def totals(shapes: Mapping[str, Mapping[str, Any]]) -> dict[str, int] | None:
    """A model's counts over every shape (None: nothing scored), as the Models table and
    `bench-gateway models` show them: found of bugs, false alarms, confidently wrong."""
    if not shapes:
        return None
    names = ("found", "of", "false_alarms", "confidently_wrong", "answered")
    return {name: sum(int(s[name]) for s in shapes.values()) for name in names}


def quick_set(tasks: Mapping[str, Task], size: int) -> list[str]:
    """*size* task ids spread over the kinds (and within a kind over shapes and languages):
    taken in turn from each kind, each kind's tasks in id order, alternating their shapes."""
    by_kind: dict[str, list[Task]] = {}
    for task in sorted(tasks.values(), key=lambda t: t.id):
        by_kind.setdefault(task.kind, []).append(task)
    queues = [_spread(by_kind[kind]) for kind in sorted(by_kind)]
    chosen: list[str] = []
    while len(chosen) < size and any(queues):
        for queue in queues:
            if queue and len(chosen) < size:
                chosen.append(queue.pop(0).id)
    return chosen


def _spread(tasks: list[Task]) -> list[Task]:
    """*tasks* reordered so that shapes and languages take turns."""
    groups: dict[tuple[str, str], list[Task]] = {}
    for task in tasks:
        groups.setdefault((task.shape, task.language or ""), []).append(task)
    order: list[Task] = []
    lists = list(groups.values())
    while any(lists):
        for group in lists:
            if group:
                order.append(group.pop(0))
    return order

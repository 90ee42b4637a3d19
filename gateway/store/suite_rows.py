"""The statements that keep the suite's runs, answers and lock (contract §20), written once for
both stores (`Suite(mark)`: `?` for SQLite, `%s` for PostgreSQL).

Why answers are kept as said, not as scores: the figures are computed from them each time they
are read (gateway/suite/figures.py), so a corrected key or scorer re-scores all of history with
no new call. The lock is one row with a lease: taking it is one conditional upsert, atomic in
both engines, so one run at a time holds across workers and replicas, and a run whose worker
died lets go when its lease lapses.
"""

from __future__ import annotations

import json
from typing import Any

RUN_COLUMNS = (
    "id", "started", "finished", "state", "models", "tasks", "quick", "asked", "answered", "notes",
)  # fmt: skip
ANSWER_COLUMNS = ("run_id", "task_id", "alias", "call_id", "status", "answer", "at")
_JSON = ("models", "tasks", "notes")
LOCK = "suite"


class Suite:
    def __init__(self, mark: str) -> None:
        m = mark
        marks = ", ".join([m] * len(RUN_COLUMNS))
        sets = ", ".join(f"{c} = excluded.{c}" for c in RUN_COLUMNS[1:])
        self.keep_run = (
            f"INSERT INTO suite_runs ({', '.join(RUN_COLUMNS)}) VALUES ({marks}) "
            f"ON CONFLICT (id) DO UPDATE SET {sets}"
        )
        self.runs = (  # (limit)
            f"SELECT {', '.join(RUN_COLUMNS)} FROM suite_runs ORDER BY started DESC LIMIT {m}"
        )
        self.run = f"SELECT {', '.join(RUN_COLUMNS)} FROM suite_runs WHERE id = {m}"
        self.add_answer = (
            f"INSERT INTO suite_answers ({', '.join(ANSWER_COLUMNS)}) "
            f"VALUES ({', '.join([m] * len(ANSWER_COLUMNS))})"
        )
        # each model's newest answer to each task (what the figures are computed from)
        self.answers = (
            "SELECT task_id, alias, answer, at FROM suite_answers WHERE id IN "
            "(SELECT MAX(id) FROM suite_answers WHERE status = 'ok' GROUP BY alias, task_id)"
        )
        self.counts = (  # (since): the suite's calls per model since a time
            f"SELECT alias, COUNT(*) AS calls FROM suite_answers WHERE at >= {m} "
            "AND status != 'cooling' GROUP BY alias"
        )
        # The lock: taken when free or lapsed (name, run, until, now); a held lease is renewed
        # by its own run.
        self.take_lock = (
            f"INSERT INTO suite_lock (name, run, until) VALUES ({m}, {m}, {m}) "
            "ON CONFLICT (name) DO UPDATE SET run = excluded.run, until = excluded.until "
            f"WHERE suite_lock.until < {m} OR suite_lock.run = excluded.run"
        )
        self.free_lock = f"UPDATE suite_lock SET until = 0 WHERE name = {m} AND run = {m}"
        self.holder = f"SELECT run FROM suite_lock WHERE name = {m} AND until >= {m}"


def run_values(run: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(json.dumps(run.get(c)) if c in _JSON else run.get(c) for c in RUN_COLUMNS)


def load_run(row: Any) -> dict[str, Any]:
    run = dict(row)
    for name in _JSON:
        if isinstance(run.get(name), str):
            run[name] = json.loads(run[name])
    run["quick"] = bool(run.get("quick"))
    return run


def answer_values(answer: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(answer.get(c) for c in ANSWER_COLUMNS)


SQLITE = Suite("?")
POSTGRES = Suite("%s")

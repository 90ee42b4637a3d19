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
MAX_DRAFT_CODE = 50_000  # a longer prompt makes no draft (and is not read for one)


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
        # Drafts: every current verdict naming claims (newest first, limit), with its panel's
        # prompt and shape; and what was decided of each draft (approved: the task, as JSON).
        # (claims_light: the same without the prompt, its size instead: enough to count them)
        drafted = f"CASE WHEN LENGTH(p.prompt) <= {MAX_DRAFT_CODE} THEN p.prompt END AS prompt"
        sized = "LENGTH(p.prompt) AS size"
        self.claims, self.claims_light = (
            f'SELECT v.call_id, v."real", v."false", c.shape, {code} FROM verdicts v '
            "JOIN calls c ON c.id = v.call_id JOIN panels p ON p.id = c.panel_id "
            "WHERE v.id IN (SELECT MAX(id) FROM verdicts GROUP BY call_id) "
            f'AND (v."real" IS NOT NULL OR v."false" IS NOT NULL) ORDER BY v.id DESC LIMIT {m}'
            for code in (drafted, sized)
        )
        self.decisions = "SELECT id, state, task FROM suite_drafts"
        self.decide = (
            f"INSERT INTO suite_drafts (id, state, task, decided) VALUES ({m}, {m}, {m}, {m}) "
            "ON CONFLICT (id) DO UPDATE SET state = excluded.state, task = excluded.task, "
            "decided = excluded.decided"
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

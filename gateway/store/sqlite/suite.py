"""The suite's records in the SQLite file (`SqliteSuite`, a part of `SqliteStore`): runs, answers
and the one-run-at-a-time lock, their statements written once in gateway/store/suite_rows.py."""

from __future__ import annotations

from typing import Any

from gateway.store.rows import load
from gateway.store.sqlite.writer import SqliteWriter
from gateway.store.suite_rows import LOCK, answer_values, load_run, run_values
from gateway.store.suite_rows import SQLITE as SQL


class SqliteSuite:
    writer: SqliteWriter

    async def take_suite_lock(self, run: str, until: float, now: float) -> bool:
        """Whether *run* holds the lock (taken, or renewed) until *until*."""
        return await self.writer.execute(SQL.take_lock, (LOCK, run, until, now)) == 1

    async def free_suite_lock(self, run: str) -> None:
        await self.writer.execute(SQL.free_lock, (LOCK, run))

    async def suite_holder(self, now: float) -> str | None:
        rows = await self.writer.fetch(SQL.holder, (LOCK, now))
        return str(rows[0]["run"]) if rows else None

    async def keep_suite_run(self, run: dict[str, Any]) -> None:
        await self.writer.execute(SQL.keep_run, run_values(run))

    async def suite_runs(self, limit: int) -> list[dict[str, Any]]:
        return [load_run(r) for r in await self.writer.fetch(SQL.runs, (limit,))]

    async def suite_run(self, run: str) -> dict[str, Any] | None:
        rows = await self.writer.fetch(SQL.run, (run,))
        return load_run(rows[0]) if rows else None

    async def add_suite_answer(self, answer: dict[str, Any]) -> None:
        await self.writer.execute(SQL.add_answer, answer_values(answer))

    async def suite_answers(self) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.writer.fetch(SQL.answers)]

    async def claim_verdicts(self, limit: int, code: bool = True) -> list[dict[str, Any]]:
        return [
            load(r)
            for r in await self.writer.fetch(SQL.claims if code else SQL.claims_light, (limit,))
        ]

    async def draft_decisions(self) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.writer.fetch(SQL.decisions)]

    async def decide_draft(self, draft: str, state: str, task: str, when: float) -> None:
        await self.writer.execute(SQL.decide, (draft, state, task, when))

    async def suite_counts(self, since: float) -> dict[str, int]:
        return {r["alias"]: r["calls"] for r in await self.writer.fetch(SQL.counts, (since,))}

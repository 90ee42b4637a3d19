"""The suite's records in PostgreSQL (`PostgresSuite`, a part of `PostgresStore`): runs, answers
and the one-run-at-a-time lock across replicas, their statements written once in
gateway/store/suite_rows.py."""

from __future__ import annotations

from gateway.store.postgres.link import PostgresLink
from gateway.store.rows import Row, load
from gateway.store.suite_rows import LOCK, POSTGRES, answer_values, load_run, run_values

SQL = POSTGRES


class PostgresSuite:
    link: PostgresLink

    async def take_suite_lock(self, run: str, until: float, now: float) -> bool:
        """Whether *run* holds the lock (taken, or renewed) until *until*."""
        async with self.link.connection() as db:
            taken = await db.execute(SQL.take_lock.encode(), (LOCK, run, until, now))
            return taken.rowcount == 1

    async def free_suite_lock(self, run: str) -> None:
        await self.link.execute(SQL.free_lock, (LOCK, run))

    async def suite_holder(self, now: float) -> str | None:
        rows = await self.link.fetch(SQL.holder, (LOCK, now))
        return str(rows[0]["run"]) if rows else None

    async def keep_suite_run(self, run: Row) -> None:
        await self.link.execute(SQL.keep_run, run_values(run))

    async def suite_runs(self, limit: int) -> list[Row]:
        return [load_run(r) for r in await self.link.fetch(SQL.runs, (limit,))]

    async def suite_run(self, run: str) -> Row | None:
        rows = await self.link.fetch(SQL.run, (run,))
        return load_run(rows[0]) if rows else None

    async def add_suite_answer(self, answer: Row) -> None:
        await self.link.execute(SQL.add_answer, answer_values(answer))

    async def suite_answers(self) -> list[Row]:
        return await self.link.fetch(SQL.answers, ())

    async def claim_verdicts(self, limit: int, code: bool = True) -> list[Row]:
        return [
            load(r)
            for r in await self.link.fetch(SQL.claims if code else SQL.claims_light, (limit,))
        ]

    async def draft_decisions(self) -> list[Row]:
        return await self.link.fetch(SQL.decisions, ())

    async def decide_draft(self, draft: str, state: str, task: str, when: float) -> None:
        await self.link.execute(SQL.decide, (draft, state, task, when))

    async def suite_counts(self, since: float) -> dict[str, int]:
        return {r["alias"]: r["calls"] for r in await self.link.fetch(SQL.counts, (since,))}

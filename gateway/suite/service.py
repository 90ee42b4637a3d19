"""The suite as a gateway worker holds it: its tasks (loaded at start), runs started on request,
by its schedule or to onboard a new model, and what GET /bench/suite shows.

`onboard(aliases)` is the one call for a model new to a running bench (contract §19): the
quick set for those models, when `suite.onboard` is on, then its follow-up where the quick set
leaves the best model on a shape in doubt (gateway/suite/follow.py); it never waits for a run to
end and never fails the caller. While another run holds the lock it asks again for up to its
`wait_s` (a reload's onboarding waits; by default it does not), then names it in the log and
leaves the models to the schedule."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from gateway.runtime import Runtime
from gateway.suite import drafts, figures, follow, run, tasks
from gateway.suite.tasks import Task, Tasks
from routing.follow_up import Ask

log = logging.getLogger("bench.suite")

RUNS_SHOWN = 20
ONBOARD_RETRY_S = 5.0  # how often onboarding asks again for a lock another run holds


class Refused(ValueError):
    """What a run was asked for cannot be run (an unknown model or task); says which."""

    def __init__(self, message: str, param: str, unknown: bool = True) -> None:
        super().__init__(message)
        self.param, self.unknown = param, unknown  # unknown: a name that is not there (404)


class Suite:
    def __init__(self, runtime: Runtime, loaded: Tasks | None = None) -> None:
        self.runtime = runtime
        self.tasks = loaded if loaded is not None else tasks.load(runtime.config.suite_dir)
        self.running: set[asyncio.Task[None]] = set()  # this worker's run, while it runs

    async def all_tasks(self) -> dict[str, Task]:
        """The task files' tasks, and the approved drafts (a file's task wins an id)."""
        return {**await drafts.approved(self.runtime.store), **self.tasks.by_id}

    def choose(
        self,
        by_id: dict[str, Task],
        models: list[str] | None,
        task_ids: list[str] | None,
        quick: bool,
    ) -> tuple[list[str], list[Task]]:
        """The models and tasks a run asks; Refused naming what is unknown."""
        known = [m.alias for m in self.runtime.config.catalog.models]
        wanted = list(dict.fromkeys(models)) if models else known
        unknown = [m for m in wanted if m not in known]
        if unknown:
            raise Refused(f"No model {', '.join(repr(m[:80]) for m in unknown[:5])}.", "models")
        if task_ids:
            missing = [t for t in task_ids if t not in by_id]
            if missing:
                names = ", ".join(repr(t[:80]) for t in missing[:5])
                raise Refused(f"No suite task {names} (GET /bench/suite lists them).", "tasks")
            ids = list(dict.fromkeys(task_ids))
        else:
            ids = sorted(by_id)
        if quick:
            chosen = {i: by_id[i] for i in ids}
            ids = figures.quick_set(chosen, self.runtime.config.suite.quick)
        if not ids:
            raise Refused("There are no suite tasks to run.", "tasks", unknown=False)
        return wanted, [by_id[i] for i in ids]

    async def start(
        self,
        models: list[str] | None = None,
        task_ids: list[str] | None = None,
        quick: bool = False,
    ) -> str:
        """Start a run (Refused, or run.Busy while another runs); its id. A quick set is
        followed up where it leaves the best model on a shape in doubt (gateway/suite/follow.py)."""
        aliases, chosen = self.choose(await self.all_tasks(), models, task_ids, quick)
        plan: list[Ask] | None = [] if quick else None
        started = await self._launch(aliases, chosen, quick, plan)
        if plan is not None:
            self._keep(asyncio.create_task(self._follow(started, plan)))
        return started.id

    async def _launch(
        self,
        aliases: list[str],
        chosen: list[Task],
        quick: bool,
        plan: list[Ask] | None,
        notes: list[str] | None = None,
        leads: list[Ask] | None = None,
    ) -> run.Run:
        """Start a run; once it ends, its figures are published and, given *plan*, the
        follow-up it leads to is put there (and named on its row). A run that answered nothing
        leads to none: what held its calls back (the share, health, failures) holds the next.
        *leads*: the runs already planned to follow it (named on its row)."""

        async def then() -> None:
            await self.publish()
            if leads:
                started.notes.append(follow.planned_note(leads))
            if plan is not None and started.answered:
                plan[:] = await follow.plan(self.runtime, await self.all_tasks())
                if plan:
                    started.notes.append(follow.planned_note(plan))

        started = await run.start(self.runtime, aliases, chosen, quick, then, notes)
        assert started.task is not None
        self._keep(started.task)
        return started

    def _keep(self, task: asyncio.Task[None]) -> None:
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def _follow(self, first: run.Run, plan: list[Ask]) -> None:
        """The follow-up of a quick set: the runs its plan names, one at a time, then the rule
        asked again, until it names none or a run answers nothing (`_launch`). Bounded: each
        task is asked once per model."""
        try:
            await self._rounds(first, plan)
        except Exception:
            log.exception("the follow-up of suite run %s stopped", first.id)

    async def _rounds(self, first: run.Run, plan: list[Ask]) -> None:
        current = first
        notes = [follow.FOLLOWS.format(origin=first.id)]
        while True:
            assert current.task is not None
            await asyncio.wait({current.task})
            if current.state != "done" or not plan:
                return
            asks, plan = list(plan), []
            for index, ask in enumerate(asks):
                by_id = await self.all_tasks()
                chosen = [by_id[t] for t in ask.tasks if t in by_id]
                if not chosen:
                    continue
                last = index == len(asks) - 1
                try:
                    current = await self._launch(
                        list(ask.models), chosen, False, plan if last else None, notes,
                        asks[index + 1:],
                    )  # fmt: skip
                except run.Busy as exc:
                    log.warning("the follow-up of suite run %s waits: run %s holds the lock; "
                                "the schedule asks the rest", first.id, exc)  # fmt: skip
                    return
                assert current.task is not None
                await asyncio.wait({current.task})
                if current.state != "done":
                    return

    async def stop(self) -> None:
        """At shutdown: a run going here stops (its row says `stopped`, the lock is freed)
        rather than hold the gateway's exit for as long as its tasks take."""
        for task in list(self.running):
            task.cancel()
        if self.running:
            await asyncio.wait(set(self.running))

    async def onboard(self, aliases: list[str], wait_s: float = 0.0) -> str | None:
        """The quick set for these models, new to the bench, and its follow-up (`start`); the
        quick set's run id, or None when onboarding is off, there is nothing to run, or another
        run holds the lock for longer than *wait_s* (logged)."""
        waited = 0.0
        while self.runtime.config.suite.onboard and aliases:
            try:
                return await self.start(aliases, None, quick=True)
            except run.Busy as exc:
                if waited >= wait_s:
                    log.warning("the quick set for %s was not run: %s", ", ".join(aliases), exc)
                    return None
            except Refused as exc:
                log.warning("the quick set for %s was not run: %s", ", ".join(aliases), exc)
                return None
            await asyncio.sleep(ONBOARD_RETRY_S)
            waited += ONBOARD_RETRY_S
        return None

    async def figures(self) -> dict[str, dict[str, dict[str, Any]]]:
        """{alias: {shape: figures}}, scored now from the saved answers."""
        return figures.figures(await self.runtime.store.suite_answers(), await self.all_tasks())

    async def publish(self) -> None:
        """Put each model's suite accuracy per shape on the live state, where routing's evidence
        is read from (gateway/state/figures.py `suite_on`): at start and after each run."""
        try:
            scored = await self.figures()
        except Exception:
            log.exception("the suite's figures could not be read")
            return
        for alias, shapes in scored.items():
            for shape, found in shapes.items():
                if found["accuracy"] is not None:
                    self.runtime.figures.learn_suite(
                        alias, shape, found["accuracy"], found["answered"]
                    )
        await self.runtime.live.flush("suite")

    async def view(self) -> dict[str, Any]:
        """GET /bench/suite's body."""
        store, now = self.runtime.store, self.runtime.clock()
        runs = [_run_view(r) for r in await store.suite_runs(RUNS_SHOWN)]
        return {
            "running": await store.suite_holder(now) is not None,
            "tasks": len(await self.all_tasks()),
            "problems": list(self.tasks.problems),
            "runs": runs,
            "models": await self.figures(),
        }

    async def stalest(self) -> list[str]:
        """Every model, new ones (never answered) first, then the longest since answered."""
        scored = await self.figures()
        last = {
            alias: max((s["scored_at"] or 0.0) for s in shapes.values())
            for alias, shapes in scored.items()
        }
        aliases = [m.alias for m in self.runtime.config.catalog.models]
        return sorted(aliases, key=lambda a: (a in last, last.get(a, 0.0)))

    async def keep_scheduled(self) -> None:
        """Every `suite.schedule_s` (0: never), a run of every task, new and stalest models
        first; a run already going is left to finish."""
        every = self.runtime.config.suite.schedule_s
        if not every:
            return
        while True:
            await asyncio.sleep(every)
            try:
                newest = await self.runtime.store.suite_runs(1)
                if newest and self.runtime.clock() - newest[0]["started"] < every:
                    continue  # another worker's run came first
                await self.start(await self.stalest())
            except run.Busy:
                log.info("the scheduled suite run waits: another run is going")
            except Exception:
                log.exception("the scheduled suite run could not start")


def _run_view(row: dict[str, Any]) -> dict[str, Any]:
    row["total"] = len(row.get("models") or []) * len(row.get("tasks") or [])
    return row

"""A suite run inside the gateway: each chosen model asked each chosen task, one call at a time
per model (the models at once), each call through a panel seat's own path.

Why a seat's path (gateway/panel/fanout.py, a panel of one seat, `suite`): the suite must obey
what every seat obeys (the rpm slot and cooldowns, health, failure classes, what a call teaches
in gateway/state/learn.py) and be recorded as seats are, so `/bench/calls/{call}` shows it
(its panel's caller is `suite`) and `/bench/usage` counts it apart (key `suite`). Each answer
is also kept as the model gave it (the figures are computed from these, gateway/suite/figures.py).

One run at a time across workers and replicas: a lease on one row of the store, renewed while
the run lives (a dead worker's lapses). The run's row says how far it got and what it skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.panel.fanout import Fanout, SeatResult, SeatStatus
from gateway.panel.seating import new_panel_id
from gateway.runtime import Runtime
from gateway.store.rows import PanelRow
from gateway.suite import asking
from gateway.suite.share import Caps, Shares
from gateway.suite.tasks import Task
from routing import Panel, Seat

log = logging.getLogger("bench.suite")

CALLER = "suite"  # the key name a suite call's panel carries: who asked
LEASE_S = 30.0  # the lock's lease, renewed every third of it while the run lives
MAX_WAIT_S = 90.0  # a wait longer than this (a cooldown) skips the model's other tasks


class Busy(Exception):
    """Another run holds the lock; its id."""


@dataclass
class Run:
    id: str
    models: list[str]
    tasks: list[Task]
    quick: bool
    started: float
    asked: int = 0
    answered: int = 0
    notes: list[str] = field(default_factory=list)
    state: str = "running"
    finished: float | None = None
    task: asyncio.Task[None] | None = None  # the run in this worker
    waited: set[str] = field(default_factory=set)  # models whose tasks waited (said once)

    def row(self) -> dict[str, Any]:
        return {
            "id": self.id, "started": self.started, "finished": self.finished,
            "state": self.state, "models": self.models, "tasks": [t.id for t in self.tasks],
            "quick": int(self.quick), "asked": self.asked, "answered": self.answered,
            "notes": self.notes,
        }  # fmt: skip


async def start(
    runtime: Runtime,
    models: list[str],
    tasks: list[Task],
    quick: bool,
    then: Callable[[], Awaitable[None]] | None = None,
    notes: list[str] | None = None,
) -> Run:
    """Take the lock and start the run in the background; Busy if another run holds it.
    *then*: awaited once the run has ended (the figures published); *notes*: its row's first."""
    now = runtime.clock()
    run = Run(f"s{int(now) & 0xFFFFFFFF:08x}{secrets.token_hex(4)}", models, tasks, quick, now)
    run.notes.extend(notes or [])
    if not await runtime.store.take_suite_lock(run.id, now + LEASE_S, now):
        holder = await runtime.store.suite_holder(now)
        raise Busy(holder or "another run")
    try:
        await runtime.store.keep_suite_run(run.row())
    except BaseException:
        await runtime.store.free_suite_lock(run.id)
        raise
    run.task = asyncio.create_task(_run(runtime, run, then))
    return run


async def _run(
    runtime: Runtime, run: Run, then: Callable[[], Awaitable[None]] | None = None
) -> None:
    log.info("suite run %s: %d model(s), %d task(s)", run.id, len(run.models), len(run.tasks))
    lease = asyncio.create_task(_keep_lease(runtime, run.id))
    try:
        day = runtime.clock() - 86400.0  # (the day's calls: a rolling day, kept apart by model)
        today = await runtime.store.suite_counts(day)
        shares = Shares(runtime.config.suite.share, today, _connections(runtime))
        async with asyncio.TaskGroup() as group:
            for alias in run.models:
                group.create_task(_model(runtime, run, alias, shares))
        if then is not None:
            await then()  # before the run is seen done: its figures are routing's at once
        run.state = "done"
    except Exception:
        log.exception("suite run %s failed", run.id)
        run.state = "failed"
        run.notes.append("the run stopped on an internal error (the gateway's log says which)")
    finally:
        lease.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lease
        run.finished = runtime.clock()
        if run.state == "running":
            run.state = "stopped"  # cancelled: the gateway is shutting down
        try:
            await runtime.store.keep_suite_run(run.row())
        finally:
            await runtime.store.free_suite_lock(run.id)
        log.info("suite run %s %s: %d asked, %d answered", run.id, run.state, run.asked,
                 run.answered)  # fmt: skip


async def _keep_lease(runtime: Runtime, run: str) -> None:
    while True:
        await asyncio.sleep(LEASE_S / 3)
        now = runtime.clock()
        try:
            await runtime.store.take_suite_lock(run, now + LEASE_S, now)
        except Exception:
            log.exception("could not renew suite run %s's lease", run)


async def _model(runtime: Runtime, run: Run, alias: str, shares: Shares) -> None:
    """Ask *alias* each task in turn, within its share and while it may be called."""
    caps = caps_of(runtime, alias)
    for index, task in enumerate(run.tasks):
        why = await _may_ask(runtime, run, alias, caps, shares)
        if why is not None:
            left = len(run.tasks) - index
            run.notes.append(f"{alias}: {left} task(s) skipped: {why}")
            await runtime.store.keep_suite_run(run.row())
            return
        shares.spent(caps, runtime.clock())
        result = await ask(runtime, run.id, alias, task)
        run.asked += 1
        run.answered += result.status == SeatStatus.OK
        await runtime.store.keep_suite_run(run.row())


async def _may_ask(
    runtime: Runtime, run: Run, alias: str, caps: Caps, shares: Shares
) -> str | None:
    """None once *alias* may be asked (after waiting for its rpm share or a short cooldown);
    else why not."""
    while True:
        unwell = runtime.model_health.unwell().get(alias)
        if unwell is not None:
            return unwell
        now = runtime.clock()
        cooldown = runtime.rate_limits.cooldown_of(alias)
        wait = shares.check(caps, now)
        if isinstance(wait, str):
            return wait
        if cooldown is not None and cooldown.until > now:
            wait = max(wait or 0.0, cooldown.until - now)
            if wait > MAX_WAIT_S:
                return f"cooling until {cooldown.until:.0f} ({cooldown.why})"
        if not wait:
            return None
        if wait > MAX_WAIT_S:
            return f"its rpm share would not free for {wait:.0f} s"
        if alias not in run.waited:  # said once per model
            run.waited.add(alias)
            why = "its cooldown" if cooldown is not None else "the suite's share of its rpm"
            run.notes.append(f"{alias}: tasks waited for {why} (suite.share {shares.share:g})")
            await runtime.store.keep_suite_run(run.row())
        await asyncio.sleep(min(wait, 1.0))


async def ask(runtime: Runtime, run_id: str, alias: str, task: Task) -> SeatResult:
    """Ask *alias* the task as a panel of one seat, recorded as a seat is, and keep the answer."""
    now = runtime.clock()
    panel_id = new_panel_id(now)
    question = asking.question(task)
    await runtime.store.add_panel(
        PanelRow(
            id=panel_id, created=now, requested_model=f"bench/suite:{task.id}",
            collection="suite", shape=task.shape, shape_by="suite", prompt=question,
            key_name=CALLER, skipped=[], notes=[f"suite run {run_id}, task {task.id}"],
            reserves=[],
        )
    )  # fmt: skip
    plan = Panel((Seat(CALLER, alias),), ())
    messages = [{"role": "user", "content": question}]
    (result,) = await Fanout(runtime, panel_id, task.shape, plan, messages, {}, counts=False).run()
    answer = {
        "run_id": run_id, "task_id": task.id, "alias": alias, "call_id": result.id,
        "status": str(result.status), "answer": result.answer, "at": result.started,
    }  # fmt: skip
    try:
        await runtime.store.add_suite_answer(answer)
    except Exception:
        log.exception("could not keep the suite's answer of %s to %s", alias, task.id)
    return result


def caps_of(runtime: Runtime, alias: str) -> Caps:
    config = runtime.config
    model = config.catalog.model(alias)
    connection = model.connection if model is not None else None
    spec = config.connections.get(connection) if connection else None
    return Caps(
        alias, connection, config.model_rpm.get(alias), spec.rpm if spec else None,
        config.model_rpd.get(alias), spec.rpd if spec else None,
    )  # fmt: skip


def _connections(runtime: Runtime) -> dict[str, str]:
    return {m.alias: m.connection for m in runtime.config.catalog.models}

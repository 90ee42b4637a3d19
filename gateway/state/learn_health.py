"""A model's health learned from each call's outcome (contract §18), for gateway/state/learn.py.

Why here and not in each caller: a panel seat, a route turn and a probe judge a model by the
same rules (routing/health.py); what they decide goes on the board (gateway/state/health.py,
shared by the workers and, through Redis, the replicas) and, when it matters across a restart,
into the store with an event when the health changed. The connection guard is applied here too:
when every model of a connection had its key refused, each is benched naming the connection's
key, not the model; when all failed capacity/timeout within a minute the connection is down:
each is benched naming it, sharing one trial (one call per wait, not one per model), and the
first answer makes the others due their trials at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gateway.state.health import ModelHealth, row_of
from gateway.store.interface import RecordStore
from routing import Catalog
from routing.health import (
    BENCHED,
    OK,
    RETIRED,
    Guard,
    Judged,
    Outcome,
    Record,
    Rules,
    connection_back,
    connection_down,
    down_why,
    guard,
    judge,
    retire_by_hand,
)
from routing.health import restore as restored

log = logging.getLogger("bench.health")


class HealthKeeper:
    """Judges each outcome, keeps the records, and answers for a connection's health."""

    def __init__(
        self,
        book: ModelHealth,
        rules: Rules,
        catalog: Catalog,
        store: RecordStore,
        clock: Callable[[], float],
    ) -> None:
        self.book, self.rules, self.store, self.clock = book, rules, store, clock
        self.catalog = catalog
        self.connection_of = {m.alias: m.connection for m in catalog.models}

    async def learn(self, alias: str, outcome: Outcome) -> Record:
        """*alias*'s record after *outcome*."""
        if alias not in self.connection_of:
            return Record()
        before = self.book.of(alias)
        if outcome.failure is None and before.health == OK and not before.transient:
            return before  # the common case: an answer from a model that was well
        connection = self.connection_of[alias]
        was_down = outcome.failure is None and self.connection(connection).health == "down"
        judged = judge(before, outcome, self.clock(), self.rules)
        if judged.record == before:
            return before
        await self._put(alias, judged)
        if outcome.failure == "signin":
            await self._guard(connection)
        elif outcome.failure in ("capacity", "timeout"):
            await self._down(connection)
        elif was_down:
            await self._back(connection)
        return judged.record

    async def _put(self, alias: str, judged: Judged) -> None:
        record = judged.record
        self.book.put(alias, record)
        if judged.changed or record.health != OK:
            event = self._event(alias, record) if judged.changed else None
            await self._keep(alias, record, event)
        elif record.transient == 0:
            await self._keep(alias, record, None)  # an ok model's kept row, brought up to date

    def _event(self, alias: str, record: Record) -> dict[str, Any]:
        at = record.since if record.since is not None else self.clock()
        log.info("%s is %s: %s", alias, record.health, record.why or "it answered")
        return {"alias": alias, "health": record.health, "why": record.why, "at": at}

    async def _keep(self, alias: str, record: Record, event: dict[str, Any] | None) -> None:
        row = {**row_of(alias, record), "changed": self.clock()}
        try:
            await self.store.keep_health(row, event)
        except Exception:
            log.exception("could not record %s's health", alias)

    async def _guard(self, connection: str) -> None:
        """Every model of *connection* refused its key: benched naming the key, none retired."""
        state = self.connection(connection)
        if state.health != "check_key":
            return
        for alias in self.members(connection):
            record = self.book.of(alias)
            if record.health == BENCHED and record.why != state.why:
                self.book.put(alias, replace(record, why=state.why))
                await self._keep(alias, replace(record, why=state.why), None)

    async def _down(self, connection: str) -> None:
        """Every model of *connection* failed at once: all benched naming it, one trial shared."""
        state = self.connection(connection)
        if state.health != "down" or state.why is None:
            return
        records = {alias: self.book.of(alias) for alias in self.members(connection)}
        for alias, record in connection_down(records, state.why, self.clock(), self.rules).items():
            await self._put(alias, Judged(record, records[alias].health != record.health))

    async def _back(self, connection: str) -> None:
        """A down connection answered its trial: the others are due theirs now."""
        records = {alias: self.book.of(alias) for alias in self.members(connection)}
        back = connection_back(records, down_why(connection), self.clock())
        for alias, record in back.items():
            await self._put(alias, Judged(record, False))

    def take_trial(self, alias: str, now: float) -> None:
        """*alias* was seated: if that is a benched model's trial (route mode trials by
        traffic; a panel seats no benched model), the trial is taken (the next one its wait
        from now, until the outcome says better), so other turns and the probe meanwhile do not
        call it; on a connection that is down, the trial is the whole connection's."""
        if not self.book.benched(alias):
            return  # the common case, read from one cell
        record = self.book.of(alias)
        if record.next_trial is None or record.next_trial > now:
            return
        later = now + max(record.backoff, self.rules.backoff_min_s)
        shared = [alias]
        if record.why == down_why(self.connection_of.get(alias, "")):
            shared = self.members(self.connection_of[alias])
        for name in shared:
            other = self.book.of(name)
            if other.health == BENCHED and (other.next_trial or later) < later:
                self.book.put(name, replace(other, next_trial=later))

    def members(self, connection: str) -> list[str]:
        return [alias for alias, name in self.connection_of.items() if name == connection]

    def connection(self, name: str) -> Guard:
        return self._guard_of(name, self.book.all())

    def _guard_of(self, name: str, records: dict[str, Record]) -> Guard:
        members = [records[alias] for alias in self.members(name)]
        return guard(name, members, self.rules.guard_window_s)

    def connections(self) -> dict[str, Guard]:
        return {name: self.connection(name) for name in sorted(set(self.connection_of.values()))}

    def _down_among(self, records: dict[str, Record]) -> list[str]:
        """The connections that are down (every model failed capacity/timeout together)."""
        if not any(r.failing for r in records.values()):
            return []
        names = sorted(set(self.connection_of.values()))
        return [name for name in names if self._guard_of(name, records).health == "down"]

    def unseatable(self, trials: bool = True) -> dict[str, Record]:
        """alias -> record of every model not to be called now. With *trials* (route mode), a
        benched model due its trial may be called, one at a time on a connection that is down;
        without (panels), no benched model is: its trial is the gateway's own probe."""
        now = self.clock()
        records = self.book.all()
        if not trials:
            return {a: r for a, r in records.items() if r.health != OK}
        out = {a: r for a, r in records.items() if r.health != OK and not r.seatable(now)}
        for name in self._down_among(records):
            due = [a for a in self.members(name) if a not in out and records[a].health != OK]
            out.update({alias: records[alias] for alias in due[1:]})
        return out

    def unwell(self, trials: bool = True) -> dict[str, str]:
        """alias -> why it is not called now, as a panel's `skipped` says it."""
        now = self.clock()
        unseatable = self.unseatable(trials)
        return {alias: why_not(record, now) for alias, record in unseatable.items()}

    def panel_unwell(self) -> dict[str, str]:
        """What a panel skips: every benched and retired model (contract §18: a panel seats
        only models that are ok, and a benched one's trial is the gateway's probe)."""
        return self.unwell(trials=False)

    def probes_due(self) -> list[str]:
        """The models the gateway should ask itself now: a benched model due its trial (one
        at a time on a connection that is down), a gone/paywalled failure awaiting its
        confirmation, and retired models due their re-probe (not one retired by hand)."""
        now, rules = self.clock(), self.rules
        records = self.book.all()
        due = []
        for alias, record in records.items():
            if record.health == RETIRED and not record.by_hand:
                due += [alias] if record.next_trial is not None and now >= record.next_trial else []
            elif record.awaiting_confirmation:
                trial = (record.first_gone or 0.0) + rules.confirm_after_s
                trial = max(trial, record.next_trial or 0.0)
                due += [alias] if now >= trial else []
            elif record.due(now):
                due.append(alias)
        for name in self._down_among(records):
            trials = [a for a in self.members(name) if a in due and records[a].due(now)]
            due = [a for a in due if a not in trials[1:]]
        return due

    def postpone(self, alias: str) -> None:
        """A probe that taught nothing (a rate limit, a refusal): not asked again at once, but
        at its next turn (a benched model's longest wait, a retired one's re-probe)."""
        record = self.book.of(alias)
        wait = self.rules.reprobe_s if record.health == RETIRED else self.rules.backoff_max_s
        if record.health != OK:
            self.book.put(alias, replace(record, next_trial=self.clock() + wait))

    def unready(self, whys: dict[str, str]) -> None:
        """Models that cannot be called as configured (their key's variable unset): benched
        with that why, with no trial until the gateway starts with it set."""
        now = self.clock()
        for alias, why in whys.items():
            record = self.book.of(alias)
            if record.health == OK or record.why != why:
                self.book.put(alias, Record(BENCHED, why, now, None))

    # --- by hand --------------------------------------------------------------------------------

    async def retire(self, alias: str, why: str) -> Record:
        record = retire_by_hand(self.book.of(alias), why, self.clock(), self.rules)
        await self._put(alias, Judged(record, True))
        return record

    async def restore(self, alias: str) -> Record:
        record = restored(self.book.of(alias), self.clock())
        await self._put(alias, Judged(record, True))
        return record


def why_not(record: Record, now: float) -> str:
    """Why a benched or retired model is not called: `benched (trial in 4 s): signin: ...`."""
    if record.health == RETIRED:
        return f"retired: {record.why or 'retired'}"
    if record.next_trial is None:
        return f"benched: {record.why or 'failing'}"
    if record.next_trial > now:
        wait = record.next_trial - now
        return f"benched (next trial in {wait:.0f} s): {record.why or 'failing'}"
    if record.awaiting_confirmation:
        return f"benched (awaiting its confirmation): {record.why or 'failing'}"
    return f"benched (its trial is due): {record.why or 'failing'}"

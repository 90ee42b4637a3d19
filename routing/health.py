"""A model's health, and how one call's outcome changes it (contract §18). Pure: no I/O.

Why rules apart from where they are applied: a panel seat, a route turn and a probe learn the
same from the same outcome (gateway/state/learn.py applies these), and a table of cases can
say what the bench does without a gateway. Failure classes are the contract's names as text
(gateway/request/failure.py makes them); times are the gateway clock's seconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

OK, BENCHED, RETIRED = "ok", "benched", "retired"
TRANSIENT = frozenset({"capacity", "timeout", "empty", "other"})
AT_ONCE = frozenset({"signin", "entitlement"})  # benched by one failure, never retired
WITHDRAWN = frozenset({"gone", "paywalled"})  # retired once confirmed
# never the model's: a cooldown (rate_limited) or the request's fault (refused)
NEVER_COUNTS = frozenset({"rate_limited", "refused"})

_END_OF_LIFE = re.compile(r"end[ -]of[ -]life|has been (?:retired|decommissioned)", re.IGNORECASE)
GUARD_WINDOW_S = 60.0  # a connection is down when all its models fail within this, at most


@dataclass(frozen=True)
class Rules:
    """The `lifecycle:` settings the rules read."""

    failures_to_bench: int = 3
    backoff_min_s: float = 5.0
    backoff_max_s: float = 60.0
    confirm_after_s: float = 600.0
    reprobe_s: float = 86400.0
    auto_retire: bool = True

    @property
    def guard_window_s(self) -> float:
        """The connection guard's "within a minute": a minute, or the longest backoff when the
        settings make that shorter (every time scales with them)."""
        return min(GUARD_WINDOW_S, self.backoff_max_s)


@dataclass(frozen=True)
class Record:
    """One model's health. *next_trial*: when a benched model may be called again (its trial),
    or when a retired one is asked again; *transient*: transient failures in a row; *first_gone*
    and *gone_class*: the first gone/paywalled failure, awaiting confirmation; *backoff*: the
    wait before the next trial; *last_failure*: the last failure's class, *failed_at* its time,
    *answered_at* the last answer's."""

    health: str = OK
    why: str | None = None
    since: float | None = None
    next_trial: float | None = None
    transient: int = 0
    first_gone: float | None = None
    gone_class: str | None = None
    backoff: float = 0.0
    last_failure: str | None = None
    failed_at: float | None = None
    answered_at: float | None = None
    by_hand: bool = False

    @property
    def failing(self) -> bool:
        """Was its last outcome a failure?"""
        return self.failed_at is not None and (
            self.answered_at is None or self.failed_at > self.answered_at
        )

    @property
    def awaiting_confirmation(self) -> bool:
        """Benched by a gone/paywalled failure: only the confirmation probe asks it again."""
        return self.health == BENCHED and self.first_gone is not None

    def due(self, now: float) -> bool:
        """Benched and due its trial (not one awaiting its confirmation)."""
        if self.health != BENCHED or self.awaiting_confirmation or self.next_trial is None:
            return False
        return now >= self.next_trial

    def seatable(self, now: float) -> bool:
        """May traffic call it now: ok, or benched and due its trial."""
        return self.health == OK or self.due(now)


@dataclass(frozen=True)
class Outcome:
    """How a call ended: *failure* None for an answer, else its class, the provider's *said*
    and HTTP *status*."""

    failure: str | None = None
    said: str | None = None
    status: int | None = None


@dataclass(frozen=True)
class Judged:
    """The record after an outcome; *changed*: its health changed (an event to keep);
    *probe_at*: when the gateway should make a probe call itself (a confirmation, a re-probe)."""

    record: Record
    changed: bool
    probe_at: float | None = None


def judge(record: Record, outcome: Outcome, now: float, rules: Rules) -> Judged:
    """What *outcome* of a call at *now* makes of *record*."""
    if outcome.failure is None:
        if record.health == RETIRED and record.by_hand:
            return Judged(replace(record, answered_at=now), False)
        ok = Record(since=now if record.health != OK else record.since, answered_at=now)
        return Judged(ok, record.health != OK)
    failure = outcome.failure
    if failure in NEVER_COUNTS:
        return Judged(record, False)
    failed = replace(record, last_failure=failure, failed_at=now)
    if failure in WITHDRAWN:
        return _withdrawn(failed, outcome, now, rules)
    words = _why(failure, outcome.said)
    if failure in AT_ONCE:
        return _bench(replace(failed, transient=0), words, now, rules)
    failed = replace(failed, transient=record.transient + 1)
    if record.health != OK or failed.transient >= rules.failures_to_bench:
        if record.health == OK:
            words = f"{failed.transient} failures in a row, the last {words}"
        return _bench(failed, words, now, rules)
    return Judged(failed, False)


def _why(failure: str, said: str | None) -> str:
    return f"{failure}: {said}" if said else failure


def _bench(record: Record, why: str, now: float, rules: Rules) -> Judged:
    """Benched, or a failed trial of a benched model: the wait doubles, up to the maximum."""
    if record.health == RETIRED:
        return _retire(record, record.why or why, now, rules, changed=False)
    if record.health == BENCHED:
        backoff = min(max(record.backoff, rules.backoff_min_s) * 2, rules.backoff_max_s)
        since = record.since
    else:
        backoff, since = min(rules.backoff_min_s, rules.backoff_max_s), now
    benched = replace(record, health=BENCHED, why=why, since=since, backoff=backoff)
    benched = replace(benched, next_trial=now + backoff)
    probe = record.first_gone + rules.confirm_after_s if record.first_gone is not None else None
    return Judged(benched, record.health != BENCHED, probe)


def _retire(record: Record, why: str, now: float, rules: Rules, *, changed: bool) -> Judged:
    retired = replace(record, health=RETIRED, why=why, since=now if changed else record.since)
    retired = replace(retired, next_trial=now + rules.reprobe_s, first_gone=None, transient=0)
    return Judged(retired, changed, retired.next_trial)


def _withdrawn(record: Record, outcome: Outcome, now: float, rules: Rules) -> Judged:
    """gone/paywalled: retired at once on a 410 or end-of-life words, else once a second
    failure of the same class comes confirm_after_s after the first; benched until then."""
    failure, words = outcome.failure or "gone", _why(outcome.failure or "gone", outcome.said)
    at_once = failure == "gone" and (
        outcome.status == 410 or bool(_END_OF_LIFE.search(outcome.said or ""))
    )
    first = record.first_gone if record.gone_class == failure else None
    confirmed = first is not None and now - first >= rules.confirm_after_s
    if rules.auto_retire and (at_once or confirmed or record.health == RETIRED):
        return _retire(record, words, now, rules, changed=record.health != RETIRED)
    if first is None:
        record = replace(record, first_gone=now, gone_class=failure)
    return _bench(replace(record, transient=0), words, now, rules)


def retire_by_hand(record: Record, why: str, now: float, rules: Rules) -> Record:
    """Retired by an admin: never re-probed back (only restored by hand)."""
    return replace(
        record, health=RETIRED, why=why, since=now, next_trial=None, by_hand=True, first_gone=None
    )


def restore(record: Record, now: float) -> Record:
    """Put back by hand: ok, counters cleared, its last failure kept for the record."""
    return Record(
        since=now,
        last_failure=record.last_failure,
        failed_at=record.failed_at,
        answered_at=record.answered_at,
    )


@dataclass(frozen=True)
class Guard:
    """A connection's health: `ok`, `check_key` (every model's key refused) or `down` (every
    model failed capacity/timeout within a minute)."""

    health: str = OK
    why: str | None = None
    since: float | None = None


def down_why(name: str) -> str:
    return f"every model of connection {name} failed at once"


def guard(name: str, records: Sequence[Record], window_s: float = GUARD_WINDOW_S) -> Guard:
    """The connection *name*'s health from its models' records (two or more). Down once all
    failed capacity/timeout within *window_s* (a minute, or the longest backoff if shorter),
    and down still while its trials fail: its models stay benched naming it
    (gateway/state/learn_health.py), each trial moving one model's last failure on and not
    the others'."""
    failing = [r for r in records if r.failing]
    if len(records) < 2 or len(failing) < len(records):
        return Guard()
    times = [r.failed_at or 0.0 for r in failing]
    if all(r.last_failure == "signin" for r in failing):
        return Guard("check_key", f"the key for connection {name} was refused", min(times))
    why = down_why(name)
    within = max(times) - min(times) <= window_s
    named = sum(r.why == why for r in records)  # all but a trial that just failed name it
    if within or named >= len(records) - 1:
        if all(r.last_failure in ("capacity", "timeout") for r in failing):
            return Guard("down", why, min(times))
    return Guard()


def connection_down(
    records: dict[str, Record], why: str, now: float, rules: Rules
) -> dict[str, Record]:
    """Every model of a connection that is down, benched naming it and due one shared trial:
    the latest trial any of them is due (a trial that just failed set it), else the shortest
    wait from *now*. Only the records that change; a retired model stays retired."""
    benched = [r for r in records.values() if r.health == BENCHED and r.next_trial is not None]
    trial = max((r.next_trial or now for r in benched), default=now + rules.backoff_min_s)
    backoff = max((r.backoff for r in benched), default=rules.backoff_min_s)
    changed = {}
    for alias, record in records.items():
        if record.health == RETIRED:
            continue
        since = record.since if record.health == BENCHED else now
        held = replace(record, health=BENCHED, why=why, since=since, next_trial=trial)
        held = replace(held, backoff=max(backoff, record.backoff))
        if held != record:
            changed[alias] = held
    return changed


def connection_back(records: dict[str, Record], why: str, now: float) -> dict[str, Record]:
    """A down connection answered again: each model benched for it is due its own trial now."""
    return {
        alias: replace(record, next_trial=now)
        for alias, record in records.items()
        if record.health == BENCHED and record.why == why and (record.next_trial or now) > now
    }

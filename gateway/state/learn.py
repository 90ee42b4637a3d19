"""The one place that learns from how a call to a model ended, whoever made the call.

Why one place: a panel seat and a route turn call the same providers, and a provider's word on
its limits means the same whichever asked. When each learned on its own they drifted (a route
member's daily-limit 429 cooled it for a default minute, the same 429 on a panel seat until the
stated reset, kept across restarts). Now `Learning.learn` takes the outcome, and:

- an answer (`Answered`, its response headers): few requests left marks the model scarce; none
  left cools it until the stated reset (gateway/state/limits.py `heard`);
- a 429 (`UpstreamRateLimited`): cools the model for what the headers or the message state, a
  daily or monthly limit until its reset, else the Retry-After the error carries, else the
  default (gateway/state/quota_signals.py `after_429`);
- a context-window refusal (`UpstreamContextWindow` naming its limit): the model's window, which
  routing then respects;
- every failure, and an answer that was none (empty, a provider's notice): its class
  (gateway/request/failure.py), returned with what was learned and written on the call's record
  by the caller;
- every outcome: the model's health (gateway/state/learn_health.py, by routing/health.py's
  rules): benched after failures in a row, retired once withdrawn, ok again on an answer.

What is learned goes on the live state (the board, or Redis through the journal, sent on with
the caller's next `live.flush()`) and into the records (`learn_limit`, `learn_window`), so a
restart keeps it.

Entry points: panel seats (gateway/panel/fanout.py) and route members (gateway/route/member.py)
call `runtime.learning.learn(alias, outcome)` as each call ends. A health probe is meant to call
the same, with its call's outcome, and then `runtime.live.flush()`; nothing else learns.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gateway.errors import UpstreamContextWindow, UpstreamError, UpstreamRateLimited
from gateway.request.failure import FailureClass, classify
from gateway.state import quota_signals
from gateway.state.figures import Figures
from gateway.state.learn_health import HealthKeeper
from gateway.state.limits import RateLimits
from gateway.store.interface import RecordStore
from routing import health

log = logging.getLogger("bench.learn")


@dataclass(frozen=True)
class Answered:
    """A call the provider answered: its response headers (names in any case). *no_answer*:
    the gateway's kind when the 200 was no answer after all (`empty`, `notice`), *said* what it
    said then."""

    headers: Mapping[str, str]
    no_answer: str | None = None
    said: str | None = None


@dataclass(frozen=True)
class Learned:
    """What a call's outcome taught: the end of the cooldown it set, if it set one (a 429
    always does), and the class of its failure (None for an answer)."""

    until: float | None = None
    failure: FailureClass | None = None


# how a call ended: answered, or the mapped error (gateway/upstream/failures.py)
Outcome = Answered | UpstreamError


class Learning:
    """Applies a call's outcome to the limits, the figures and the records."""

    def __init__(
        self,
        limits: RateLimits,
        figures: Figures,
        store: RecordStore,
        scrub: Callable[[str | None], str | None],
        health: HealthKeeper,
    ) -> None:
        self.limits, self.figures, self.store = limits, figures, store
        self.scrub = scrub  # an upstream's message, its secrets masked (Runtime.scrub_error)
        self.health = health

    async def learn(self, alias: str, outcome: Outcome) -> Learned:
        """Learn what *outcome* of a call to *alias* says."""
        learned = await self._learn(alias, outcome)
        if learned.failure is None:
            verdict = health.Outcome()
        elif isinstance(outcome, Answered):
            verdict = health.Outcome(learned.failure.value, self.scrub(outcome.said), 200)
        else:
            said = self.scrub(outcome.message)
            verdict = health.Outcome(learned.failure.value, said, outcome.status)
        await self.health.learn(alias, verdict)
        return learned

    async def _learn(self, alias: str, outcome: Outcome) -> Learned:
        if isinstance(outcome, Answered):
            until = await self._answered(alias, outcome.headers)
            if outcome.no_answer is None:
                return Learned(until)
            return Learned(until, classify(200, self.scrub(outcome.said), outcome.no_answer))
        failure = classify(outcome.status, self.scrub(outcome.message), outcome.kind)
        if isinstance(outcome, UpstreamRateLimited):
            return Learned(await self._limited(alias, outcome), failure)
        if isinstance(outcome, UpstreamContextWindow) and outcome.limit:
            await self._window(alias, outcome.limit)
        return Learned(None, failure)

    async def _answered(self, alias: str, headers: Mapping[str, str]) -> float | None:
        learned = self.limits.heard(alias, headers)
        if learned is None:
            return None
        return await self._remember(alias)

    async def _limited(self, alias: str, error: UpstreamRateLimited) -> float:
        limits = self.limits
        now = limits.clock()
        message = self.scrub(error.message) or ""
        learned = quota_signals.after_429(message, error.headers, now, limits.zone)
        if learned.until is None and error.retry_after is not None:
            learned = dataclasses.replace(learned, until=now + error.retry_after, source="body")
        until = limits.learn(alias, learned)
        await self._remember(alias)
        return until

    async def _remember(self, alias: str) -> float | None:
        """Keep a cooldown learned from a provider across restarts; its end, if it cools."""
        cooldown = self.limits.cooldown_of(alias)
        if cooldown is None:
            return None
        row = {"alias": alias, "until": cooldown.until, "why": cooldown.why}
        try:
            await self.store.learn_limit({**row, "source": cooldown.source})
        except Exception:
            log.exception("could not record %s's learned limit", alias)
        return cooldown.until

    async def _window(self, alias: str, window: int) -> None:
        if self.figures.learn_window(alias, window):
            try:
                await self.store.learn_window(alias, window)
            except Exception:
                log.exception("could not record %s's context window", alias)

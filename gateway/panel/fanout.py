"""Calling a seated panel: every seat at once, reserves swapped in the moment a seat fails.

Each seat ends as a value (ok, empty, error, timeout, rate_limited, cooling), never as an
exception that could cancel its siblings; a failed one also names its failure's class
(gateway/request/failure.py). A seat that failed with any class but `refused` (the reserve
would be asked the same) and `timeout` (the panel must not wait twice) goes to the next
reserve: a panel never loses a chair to a model that cannot answer. A seat's record is
written the moment it finishes, so an answer is on the record even if the client has gone or
the process dies a second later.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from gateway.errors import UpstreamError, UpstreamRateLimited, UpstreamTimeout
from gateway.panel.notices import provider_notice
from gateway.request.failure import FailureClass
from gateway.request.hints import NO_HINTS, Hints
from gateway.runtime import Runtime
from gateway.state.learn import Answered
from gateway.state.limits import Permit, Refused
from gateway.upstream.params import supported_params
from routing import Panel

log = logging.getLogger("bench.fanout")


class SeatStatus(StrEnum):
    """How a seat ended. A str, so it is written to JSON and to the records as the plain word."""

    OK = "ok"
    EMPTY = "empty"
    ERROR = "error"
    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    COOLING = "cooling"  # not called: its model was cooling or over its rpm cap

    @property
    def limited(self) -> bool:
        """Rate limited or cooling (whether a seat goes to a reserve is its failure's class)."""
        return self in (SeatStatus.RATE_LIMITED, SeatStatus.COOLING)


@dataclass
class SeatResult:
    id: str
    panel_id: str
    seat: str
    alias: str
    model: str
    connection: str
    shape: str
    status: SeatStatus = SeatStatus.ERROR
    error: str | None = None
    error_class: str | None = None
    failure: FailureClass | None = None  # why a failed seat failed (None: it answered)
    seconds: float = 0.0
    first_token_s: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    answer: str | None = None
    replaces: str | None = None
    replaced_by: str | None = None
    started: float = 0.0
    finished: float | None = None
    dropped: list[str] | None = None  # what of the request this seat's model was not given

    def row(self) -> dict[str, Any]:
        """The seat's record. Every field holds a plain value, so a shallow copy is the same as
        `dataclasses.asdict`, without its deep copy of each value (2 % of a worker's CPU)."""
        return {name: getattr(self, name) for name in _SEAT_FIELDS}


_SEAT_FIELDS = tuple(f.name for f in fields(SeatResult))


OnFinish = Callable[[SeatResult], Awaitable[None] | None]


class Fanout:
    def __init__(
        self,
        runtime: Runtime,
        panel_id: str,
        shape: str,
        plan: Panel,
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        on_finish: OnFinish | None = None,
        *,
        counts: bool = True,
        stream: bool = False,
        permits: dict[str, Permit | Refused] | None = None,
        hints: Hints = NO_HINTS,
    ) -> None:
        self.runtime = runtime
        self.panel_id = panel_id
        self.shape = shape
        self.plan = plan
        self.messages = messages
        self.sampling = sampling
        self.hints = hints
        self.on_finish = on_finish
        self.counts = counts  # False for calls that are not panel seats (the merger)
        self.stream = stream  # stream the upstream calls
        self.permits = dict(permits or {})  # seat -> its rpm slot, taken as it was seated
        self.reserves = list(plan.reserves)
        self.reserve_number = plan.reserves_used
        self.results: list[SeatResult] = []
        self.notes: list[str] = []  # what the run decided, for bench.notes (pacing)

    async def run(self) -> list[SeatResult]:
        async with asyncio.TaskGroup() as group:
            for seat in self.plan.seats:
                group.create_task(self._occupy(seat.name, seat.alias, seat.replaces))
        return self.results

    async def _occupy(self, seat: str, alias: str, replaces: str | None) -> None:
        """Call one seat; while it fails with a class that takes a reserve (a limit, a dead
        model, a refused key, ...), hand it to the next reserve."""
        while True:
            result = await self._attempt(seat, alias, replaces)
            self.results.append(result)
            failed = result.failure
            swap = failed is not None and failed.takes_a_reserve and self._next_reserve()
            if swap:
                self.reserve_number += 1
                result.replaced_by = f"reserve{self.reserve_number}"
            await self._finished(result)
            if not swap:
                return
            assert result.replaced_by is not None  # set just above, with swap
            seat, alias, replaces = result.replaced_by, swap, result.seat
            self.runtime.figures.seated(alias, self.runtime.clock())

    def _next_reserve(self) -> str | None:
        while self.reserves:
            alias = self.reserves.pop(0)
            if self.runtime.rate_limits.cooldown_of(alias) is None:
                return alias
        return None

    async def _attempt(self, seat: str, alias: str, replaces: str | None) -> SeatResult:
        runtime = self.runtime
        model = runtime.config.catalog.model(alias)
        assert model is not None
        result = SeatResult(
            id=f"{self.panel_id}.{seat}",
            panel_id=self.panel_id,
            seat=seat,
            alias=alias,
            model=model.served,
            connection=model.connection,
            shape=self.shape,
            replaces=replaces,
            started=runtime.clock(),
        )
        permit = self.permits.pop(seat, None) or await runtime.live.acquire(alias)
        if isinstance(permit, Refused) and self._may_pace(seat, permit):
            permit = await self._pace(seat, alias, permit)
        if isinstance(permit, str):
            result.status, result.error, result.error_class = SeatStatus.COOLING, permit, "cooling"
            result.failure = FailureClass.RATE_LIMITED  # not called: its model is limited
            result.finished = result.started
            return result
        params = runtime.config.litellm_params[alias]
        kept, dropped = self.hints.resolve(supported_params(params["model"]))
        result.dropped = list(dropped)
        began = time.monotonic()
        try:
            answer = await runtime.upstream.call(
                params,
                self.messages,
                {**self.sampling, **kept},
                runtime.config.gateway.seat_timeout_s,
                stream=self.stream,
                max_answer_bytes=runtime.config.gateway.max_answer_bytes,
                reader=runtime.config.reader(alias),
            )
        except UpstreamError as exc:
            await self._failed(result, exc)
        except Exception as exc:  # a bug in a seat must not cancel its siblings
            log.exception("seat %s failed unexpectedly", result.id)
            result.status, result.error_class = SeatStatus.ERROR, "internal"
            result.error = f"internal error: {type(exc).__name__}"
            result.failure = FailureClass.OTHER
        else:
            text = runtime.scrub(answer.text) or ""  # an echoed provider secret, masked
            result.status = SeatStatus.OK if text.strip() else SeatStatus.EMPTY
            result.answer = text
            result.tokens_in, result.tokens_out = answer.tokens_in, answer.tokens_out
            first = answer.first_token_s  # to the ms, as seconds is: never past it
            result.first_token_s = None if first is None else round(first, 3)
            if result.status == SeatStatus.EMPTY:
                result.error, result.error_class = "the model returned an empty answer", "empty"
            elif (notice := provider_notice(text)) is not None:
                result.status, result.error_class = SeatStatus.ERROR, "notice"
                result.error = f"the provider sent a notice, not an answer ({notice!r})"
            said = text if result.error_class == "notice" else result.error
            learned = await runtime.learning.learn(
                alias, Answered(answer.headers, result.error_class, said)
            )
            result.failure = learned.failure
        finally:
            permit.release()
        result.seconds = round(time.monotonic() - began, 3)
        result.finished = runtime.clock()
        return result

    async def _failed(self, result: SeatResult, exc: UpstreamError) -> None:
        result.error = self.runtime.scrub_error(exc.message)
        result.error_class = exc.kind
        now = self.runtime.clock()
        learned = await self.runtime.learning.learn(result.alias, exc)
        result.failure, until = learned.failure, learned.until
        if isinstance(exc, UpstreamRateLimited):
            result.status = SeatStatus.RATE_LIMITED
            assert until is not None  # a 429 always cools its model
            result.error = f"{result.error} (cooling {until - now:.0f} s)"
        elif isinstance(exc, UpstreamTimeout):
            result.status = SeatStatus.TIMEOUT
        else:
            result.status = SeatStatus.ERROR

    def _may_pace(self, seat: str, refused: Refused) -> bool:
        """Wait for a member's rpm slot rather than hand its seat to a reserve, when the slot
        frees within `pace_wait_s` (the time the panel's other seats take anyway)."""
        pace = self.runtime.config.gateway.pace_wait_s
        member = seat.startswith("member") or seat in ("primary", "second")
        return member and refused.frees_in is not None and 0 < refused.frees_in <= pace

    async def _pace(self, seat: str, alias: str, refused: Refused) -> Permit | Refused:
        """Wait on the gateway's clock until the slot frees (at most `pace_wait_s` of real time
        more than stated, should the clock stand still), then ask again."""
        assert refused.frees_in is not None
        runtime = self.runtime
        end = runtime.clock() + refused.frees_in
        give_up = time.monotonic() + runtime.config.gateway.pace_wait_s + 1.0
        while runtime.clock() < end and time.monotonic() < give_up:
            await asyncio.sleep(min(0.02, max(0.001, end - runtime.clock())))
        permit = await runtime.live.acquire(alias)
        if not isinstance(permit, str):
            self.notes.append(
                f"{seat} ({alias}) waited {refused.frees_in:.1f} s for its rpm slot rather than "
                "hand its seat to a reserve (gateway.pace_wait_s)"
            )
        return permit

    async def _finished(self, result: SeatResult) -> None:
        if result.status == SeatStatus.OK and self.counts:
            self.runtime.figures.answered(result.alias)
        if result.failure is not None and result.status != SeatStatus.COOLING:
            log.warning(  # its error is already scrubbed of secrets (Runtime.scrub_error)
                "seat %s failed: model %s (%s) on connection %s: %s: %s",
                result.id, result.alias, result.model, result.connection, result.failure,
                result.error,
            )  # fmt: skip
        await self.runtime.live.flush()  # the slot released, the answer counted, what was learned
        try:
            await self.runtime.store.add_call(result.row())
        except Exception:
            log.exception("could not record seat %s", result.id)
        if self.on_finish is not None:
            outcome = self.on_finish(result)
            if outcome is not None:
                await outcome

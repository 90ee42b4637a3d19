"""A seated panel, to its outcome: one object, `PanelRun`, whatever the client's format.

Seating (gateway/panel/seating.py) chooses and marks the seats, puts the panel on the record and
returns its `PanelRun`. A format's renderer then either awaits `run()` and shapes `completion()` (or
`failure()`), or follows `events()`, every seat's finish the moment it happens, then the end. Plain
and streamed replies are the same run.

The panel runs as a task the app owns, not the request: a client that hangs up does not cancel
its seats, and shutdown waits for running panels so every answer is recorded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from gateway.errors import (
    GatewayError,
    PanelFailed,
    TooManyRequests,
)
from gateway.panel import reply
from gateway.panel.ask import Ask
from gateway.panel.fanout import Fanout, SeatResult
from gateway.panel.merger import Merge, merge
from gateway.panel.reply import PanelFacts
from gateway.request import hints
from gateway.runtime import Runtime
from gateway.state.limits import Permit, Refused
from gateway.upstream.params import supported_params

log = logging.getLogger("bench.panel")


@dataclass(frozen=True)
class Outcome:
    seats: list[SeatResult]  # in seat order
    merge: Merge | None = None


@dataclass(frozen=True)
class Completion:
    """A panel's result, in no client's format: a renderer shapes it."""

    panel_id: str
    model: str  # as the client asked for it
    created: float
    text: str  # the markdown of every answer side by side, or the merged answer
    seats: list[SeatResult]  # in seat order
    usage: dict[str, int]
    bench: dict[str, Any]  # the `bench` field: panel, shape, seats, skipped, notes, ...


@dataclass(frozen=True)
class SeatFinished:
    seat: SeatResult


@dataclass(frozen=True)
class KeepAlive:
    """Nothing finished for `gateway.keepalive_s`: a streaming renderer says it is alive."""


@dataclass(frozen=True)
class PanelEnded:
    """The last event: the completion, or the error when no seat answered (or the run broke)."""

    completion: Completion | None
    error: GatewayError | None


Event = SeatFinished | KeepAlive | PanelEnded


def _formatted(sampling: dict[str, Any]) -> bool:
    """A response_format other than plain text was asked for."""
    asked = sampling.get("response_format")
    return isinstance(asked, dict) and asked.get("type", "text") != "text"


class PanelRun:
    """One seated panel: its facts and plan, what was asked, and the calls of its seats.

    Seats are not streamed upstream, whatever the client's `stream`: a panel sends a seat's
    section only once that seat has finished, so streaming it would buy nothing but litellm's
    per-chunk CPU on the event loop (a streamed panel of five 200 KB answers took 32-41 s of
    it). `gateway.stream_seats: always` streams them anyway, for first-token times."""

    def __init__(
        self,
        runtime: Runtime,
        facts: PanelFacts,
        ask: Ask,
        permits: dict[str, Permit | Refused] | None = None,
    ) -> None:
        self.runtime = runtime
        self.facts = facts
        self.ask = ask
        self._finished: asyncio.Queue[SeatResult | None] = asyncio.Queue()
        self.fanout = Fanout(
            runtime,
            facts.panel_id,
            facts.shape,
            facts.plan,
            ask.messages,
            ask.sampling,
            on_finish=self._finished.put_nowait,
            stream=runtime.config.gateway.stream_seats == "always",
            permits=permits,
            hints=ask.hints,
        )
        self._task: asyncio.Task[Outcome] | None = None

    @property
    def panel_id(self) -> str:
        return self.facts.panel_id

    @property
    def headers(self) -> dict[str, str]:
        """X-Bench-Panel, X-Panel-Shape and X-Bench-Seats: every seat's `{call, seat, alias,
        status}`, with its final status once the run is done; before that (a stream's headers
        go out first) the seated plan, each `seated` (the final statuses are in the stream's
        `bench`)."""
        panel_id = self.facts.panel_id
        if self._task is not None and self._task.done() and not self._task.cancelled():
            if self._task.exception() is None:
                seats = [
                    {"call": r.id, "seat": r.seat, "alias": r.alias, "status": str(r.status)}
                    for r in self.outcome.seats
                ]
            else:
                seats = []
        else:
            seats = [
                {
                    "call": f"{panel_id}.{s.name}",
                    "seat": s.name,
                    "alias": s.alias,
                    "status": "seated",
                }
                for s in self.facts.plan.seats
            ]
        return {
            "X-Bench-Panel": panel_id,
            "X-Panel-Shape": self.facts.shape,
            "X-Bench-Seats": json.dumps(seats, separators=(",", ":")),
            **hints.header(self._dropped()),
        }

    def _dropped(self) -> list[str]:
        """What of the request some seat's model is not given: whatever no model takes, and each
        hint a seated model's provider does not (each seat's own list is on its record)."""
        ask, params = self.ask, self.runtime.config.litellm_params
        dropped = list(ask.hints.dropped)
        if ask.hints.offered:
            for seat in self.facts.plan.seats:
                dropped += ask.hints.resolve(supported_params(params[seat.alias]["model"]))[1]
        return dropped

    def start(self) -> asyncio.Task[Outcome]:
        """Start the seats' calls as an app-owned task (once; later calls return the task)."""
        if self._task is None:
            task = asyncio.get_running_loop().create_task(
                self._work(), name=f"panel {self.panel_id}"
            )
            self.runtime.panels.add(task)
            task.add_done_callback(self.runtime.panels.discard)
            task.add_done_callback(lambda _: self._finished.put_nowait(None))
            self._task = task
        return self._task

    async def run(self) -> Outcome:
        """The panel's outcome. Cancelling the waiter (a client gone) leaves the seats running."""
        return await asyncio.shield(self.start())

    async def _work(self) -> Outcome:
        results = await self.fanout.run()
        if self.fanout.notes:  # what the run itself decided (pacing) goes in bench.notes
            plan = self.facts.plan
            plan = dataclasses.replace(plan, notes=plan.notes + tuple(self.fanout.notes))
            self.facts = dataclasses.replace(self.facts, plan=plan)
        seats = reply.in_seat_order(self.facts.plan, results)
        if not self.ask.merged or not reply.answered(seats):
            return Outcome(seats)
        merged = await merge(self.runtime, self.facts, self.ask.messages, self.ask.sampling, seats)
        return Outcome(seats, merged)

    @property
    def outcome(self) -> Outcome:
        if self._task is None or not self._task.done():
            raise RuntimeError(f"panel {self.panel_id} has not finished")
        return self._task.result()

    def completion(self) -> Completion:
        """The finished panel's result: seats in seat order, the merge if any, usage, `bench`."""
        outcome, facts = self.outcome, self.facts
        seats = outcome.seats
        text = reply.content(facts, seats)
        usage = reply.usage(seats)
        bench = reply.bench_field(facts, seats)
        merged = outcome.merge
        if merged is not None:
            if merged.result is not None:
                bench["merger"] = reply.seat_view(merged.result)
                usage = reply.usage([*seats, merged.result])
            if merged.answer is not None:
                text = merged.answer
            else:
                bench["note"] = merged.note
        if (merged is None or merged.answer is None) and _formatted(self.ask.sampling):
            bench["notes"].append(
                f"response_format {self.ask.sampling['response_format']['type']} went to every "
                "seat; this content is the seats' answers side by side in markdown, not that "
                f"format: ask bench/{facts.collection}:merged for one reply in it"
            )
        return Completion(
            panel_id=facts.panel_id,
            model=facts.requested_model,
            created=facts.created,
            text=text,
            seats=seats,
            usage=usage,
            bench=bench,
        )

    def failure(self) -> GatewayError | None:
        """None when a seat answered; else 429 with Retry-After when every seat was rate limited
        or cooling, or 502. Either way the error carries `bench` with every seat."""
        seats, facts, runtime = self.outcome.seats, self.facts, self.runtime
        if reply.answered(seats):
            return None
        bench = {"bench": reply.bench_field(facts, seats)}
        if reply.all_limited(seats):
            seconds = runtime.rate_limits.retry_after(r.alias for r in seats)
            return TooManyRequests(
                f"Every seat of panel {facts.panel_id} is rate limited or cooling; "
                f"try again in {seconds} s.",
                headers={**self.headers, "Retry-After": str(seconds)},
                extra=bench,
            )
        return PanelFailed(
            f"No seat of panel {facts.panel_id} answered: "
            + "; ".join(f"{r.seat} ({r.alias}) {r.status}" for r in seats),
            headers=self.headers,
            extra=bench,
        )

    async def events(self) -> AsyncIterator[Event]:
        """Every seat's finish as it happens (reserves included), a KeepAlive whenever nothing
        finished for `gateway.keepalive_s`, then PanelEnded. Starts the run if need be; one
        reader per run."""
        task = self.start()
        keepalive = self.runtime.config.gateway.keepalive_s
        while True:
            try:
                finished = await asyncio.wait_for(self._finished.get(), timeout=keepalive)
            except TimeoutError:
                yield KeepAlive()
                continue
            if finished is None:
                break
            yield SeatFinished(finished)
        try:
            task.result()
            error = self.failure()
        except Exception:
            log.exception("panel %s failed", self.panel_id)
            error = GatewayError("The panel failed unexpectedly.")
        yield PanelEnded(None if error is not None else self.completion(), error)

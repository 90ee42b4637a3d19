"""Running a seated panel to its outcome, and shaping that outcome as a reply or an error.

The panel runs as a task the app owns, not the request: a client that hangs up does not cancel
its seats, and shutdown waits for running panels so every answer is recorded.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from gateway import reply
from gateway.asking import ChatAsk
from gateway.errors import GatewayError, PanelFailed, TooManyRequests
from gateway.fanout import Fanout, SeatResult
from gateway.merger import Merge, merge
from gateway.reply import PanelFacts
from gateway.runtime import Runtime


@dataclass(frozen=True)
class Outcome:
    seats: list[SeatResult]  # in seat order
    merge: Merge | None = None


def start(runtime: Runtime, facts: PanelFacts, work: Coroutine[Any, Any, Outcome]) -> asyncio.Task:
    task = asyncio.get_running_loop().create_task(work, name=f"panel {facts.panel_id}")
    runtime.panels.add(task)
    task.add_done_callback(runtime.panels.discard)
    return task


async def run(runtime: Runtime, facts: PanelFacts, ask: ChatAsk, fanout: Fanout) -> Outcome:
    results = await fanout.run()
    seats = reply.in_seat_order(facts.plan, results)
    if not ask.merged or not reply.answered(seats):
        return Outcome(seats)
    return Outcome(seats, await merge(runtime, facts, ask.messages, ask.sampling, seats))


def headers(facts: PanelFacts) -> dict[str, str]:
    return {"X-Bench-Panel": facts.panel_id, "X-Panel-Shape": facts.shape}


def completion(facts: PanelFacts, outcome: Outcome) -> dict[str, Any]:
    body = reply.completion(facts, outcome.seats)
    if outcome.merge is not None:
        merged = outcome.merge
        if merged.result is not None:
            body["bench"]["merger"] = reply.seat_view(merged.result)
            body["usage"] = reply.usage([*outcome.seats, merged.result])
        if merged.answer is not None:
            body["choices"][0]["message"]["content"] = merged.answer
        else:
            body["bench"]["note"] = merged.note
    return body


def failure(runtime: Runtime, facts: PanelFacts, seats: list[SeatResult]) -> GatewayError:
    """No seat answered: 429 with Retry-After when every seat was limited, else 502."""
    bench = {"bench": reply.bench_field(facts, seats)}
    if reply.all_limited(seats):
        ends = [runtime.rate_limits.cooldown_of(r.alias) for r in seats]
        wait = min((c.until for c in ends if c is not None), default=runtime.clock() + 1)
        seconds = max(1, math.ceil(wait - runtime.clock()))
        return TooManyRequests(
            f"Every seat of panel {facts.panel_id} is rate limited or cooling; "
            f"try again in {seconds} s.",
            headers={**headers(facts), "Retry-After": str(seconds)},
            extra=bench,
        )
    return PanelFailed(
        f"No seat of panel {facts.panel_id} answered: "
        + "; ".join(f"{r.seat} ({r.alias}) {r.status}" for r in seats),
        headers=headers(facts),
        extra=bench,
    )

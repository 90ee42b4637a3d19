"""A route turn once a member has it: its reply relayed, and the call record it ends as.

The turn is recorded when its reply ends: a plain reply at once, a stream when it ends, breaks
off or the client hangs up (then by a task of its own, so the record never waits on a client).
A turn no member answered is recorded too, with each member's failure, before the refusal that
names them (gateway/route/start.py chooses and tries the members).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import (
    BadRequest,
    GatewayError,
    PanelFailed,
    PayloadTooLarge,
    TooManyRequests,
    UpstreamError,
)
from gateway.panel.hints import header
from gateway.route.ask import RouteAsk
from gateway.route.keepalive import with_keepalive
from gateway.runtime import Runtime
from gateway.upstream.relay import chunks_of, close

_OWN_TASKS: set[asyncio.Task[Any]] = set()


@dataclass
class Failure:
    alias: str
    status: str  # rate_limited | cooling | error | timeout | empty
    error: str
    kind: str = ""  # the UpstreamError's kind (refused, context_window, ...), else the status

    def view(self) -> dict[str, str]:
        return {"alias": self.alias, "status": self.status, "error": self.error}


@dataclass
class RouteTurn:
    """One turn, given to a member: its reply (plain) or its chunks (streamed, the first
    already held), and what it is recorded as once it ends."""

    runtime: Runtime
    ask: RouteAsk
    conversation: str
    turn: int
    alias: str
    shape: str
    failures: list[Failure]
    began: float
    response: Any = None  # plain: litellm's ModelResponse
    held: list[Any] = field(default_factory=list)  # streamed: chunks up to the first piece
    stream: Any = None
    first_token_s: float | None = None
    recorded: bool = False
    on_end: list[Callable[[], None]] = field(default_factory=list)
    given: int = 0  # held chunks handed on so far
    dropped: tuple[str, ...] = ()  # what of the request this member could not be given

    @property
    def call(self) -> str:
        return f"{self.conversation}.{self.turn}"

    @property
    def headers(self) -> dict[str, str]:
        named = {"X-Bench-Conversation": self.conversation, "X-Bench-Model": self.alias}
        return {**named, **header(self.dropped)}

    @property
    def bench(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "call": self.call,
            "alias": self.alias,
            "turn": self.turn,
            "collection": self.ask.collection,
            "failed_over": [f.view() for f in self.failures],
        }

    def relayed(self) -> AsyncIterator[Any]:
        """The chunks, with a `Quiet` whenever the member is silent for the keep-alive time.
        The held chunks are handed on at once (no task hop), so the first text leaves in the
        same write as the response's headers (gateway/serve/connection.py)."""
        return with_keepalive(self.chunks(), self.runtime.config.gateway.keepalive_s, self.in_hand)

    def in_hand(self) -> bool:
        return self.given < len(self.held)

    async def chunks(self) -> AsyncIterator[Any]:
        """The streamed reply's chunks as they come, recorded when it ends (or breaks off, or
        the client hangs up: then the record is written by a task of its own)."""
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: Any = None
        error: str | None = None
        try:
            for chunk in self.held:
                _collect(chunk, text, calls)
                self.given += 1
                yield chunk
            async for chunk in chunks_of(self.stream):
                usage = getattr(chunk, "usage", None) or usage
                _collect(chunk, text, calls)
                yield chunk
        except UpstreamError as exc:
            error = self.runtime.scrub(exc.message) or exc.kind
            raise
        except BaseException:
            error = "the client hung up before the turn ended"
            raise
        finally:
            answer = "".join(text) or (json.dumps(list(calls.values())) if calls else "")
            row = self._row("error" if error else "ok", error, answer, usage)
            task = asyncio.get_running_loop().create_task(self._record(row))
            _OWN_TASKS.add(task)
            task.add_done_callback(_OWN_TASKS.discard)
            self._ended()
            await close(self.stream)

    async def finish_plain(self) -> None:
        message = self.response.choices[0].message
        calls = [c.model_dump() for c in (getattr(message, "tool_calls", None) or [])]
        answer = message.content or (json.dumps(calls) if calls else "")
        self._ended()
        await self._record(self._row("ok", None, answer, getattr(self.response, "usage", None)))

    def _ended(self) -> None:
        for callback in self.on_end:
            callback()
        self.on_end.clear()

    def _row(self, status: str, error: str | None, answer: str, usage: Any) -> dict[str, Any]:
        model = self.runtime.config.catalog.model(self.alias)
        assert model is not None
        now = self.runtime.clock()
        return {
            "id": self.call,
            "panel_id": self.conversation,
            "seat": f"turn{self.turn}",
            "alias": self.alias,
            "model": model.served,
            "connection": model.connection,
            "shape": self.shape,
            "status": status,
            "error": error,
            "error_class": None if error is None else "stream",
            "seconds": round(time.monotonic() - self.began, 3),
            "first_token_s": self.first_token_s,
            "tokens_in": getattr(usage, "prompt_tokens", 0) or 0,
            "tokens_out": getattr(usage, "completion_tokens", 0) or 0,
            "answer": answer,
            "started": now - (time.monotonic() - self.began),
            "finished": now,
            "failed_over": [f.view() for f in self.failures],
            "dropped": list(self.dropped),
        }

    async def _record(self, row: dict[str, Any]) -> None:
        if self.recorded:
            return
        self.recorded = True
        if row["status"] == "ok":
            self.runtime.figures.answered(self.alias)
        await self.runtime.live.flush("turn end")
        await self.runtime.store.add_call(row)


def _collect(chunk: Any, text: list[str], calls: dict[int, dict[str, Any]]) -> None:
    """Keep what the record needs of a chunk: its text, and its tool calls assembled."""
    for choice in getattr(chunk, "choices", None) or ():
        delta = choice.delta
        if getattr(delta, "content", None):
            text.append(delta.content)
        for part in getattr(delta, "tool_calls", None) or ():
            call = calls.setdefault(part.index or 0, {"id": None, "name": "", "arguments": ""})
            call["id"] = part.id or call["id"]
            if part.function is not None:
                call["name"] += part.function.name or ""
                call["arguments"] += part.function.arguments or ""


async def record_failed(
    runtime: Runtime,
    ask: RouteAsk,
    conversation: str,
    turn: int,
    shape: str,
    failures: list[Failure],
    began: float,
) -> None:
    last = failures[-1] if failures else Failure(ask.collection, "error", "no member to try")
    model = runtime.config.catalog.model(last.alias)
    now = runtime.clock()
    await runtime.store.add_call(
        {
            "id": f"{conversation}.{turn}",
            "panel_id": conversation,
            "seat": f"turn{turn}",
            "alias": last.alias,
            "model": model.served if model else "",
            "connection": model.connection if model else "",
            "shape": shape,
            "status": last.status,
            "error": last.error,
            "error_class": last.kind or last.status,
            "seconds": round(time.monotonic() - began, 3),
            "started": now,
            "finished": now,
            "failed_over": [f.view() for f in failures[:-1]],
            "dropped": list(ask.hints.dropped),
        }
    )


# A member refusing the request itself: trying again cannot help, so when every member tried
# refuses it the refusal is the client's (400; 413 when it is the context every one refuses).
_REFUSED = ("refused", "context_window")


def refusal(
    runtime: Runtime, conversation: str, turn: int, failures: list[Failure]
) -> GatewayError:
    bench = {
        "bench": {
            "conversation": conversation,
            "call": f"{conversation}.{turn}",
            "turn": turn,
            "failed_over": [f.view() for f in failures],
        }
    }
    headers = {"X-Bench-Conversation": conversation}
    named = "; ".join(f"{f.alias} {f.status}: {f.error}" for f in failures) or "no member"
    if failures and all(f.status in ("rate_limited", "cooling") for f in failures):
        seconds = runtime.rate_limits.retry_after(f.alias for f in failures)
        return TooManyRequests(
            f"Every member tried for turn {conversation}.{turn} is rate limited or cooling "
            f"({named}); try again in {seconds} s.",
            headers={**headers, "Retry-After": str(seconds)},
            extra=bench,
        )
    if failures and all(f.kind in _REFUSED for f in failures):
        if all(f.kind == "context_window" for f in failures):
            return PayloadTooLarge(
                f"No member's context window holds turn {conversation}.{turn} ({named}).",
                headers=headers,
                extra=bench,
            )
        return BadRequest(
            f"Every member refused turn {conversation}.{turn} as asked ({named}).",
            headers=headers,
            extra=bench,
        )
    return PanelFailed(
        f"No member answered turn {conversation}.{turn}: {named}.", headers=headers, extra=bench
    )

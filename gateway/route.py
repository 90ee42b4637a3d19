"""Route mode: a collection as one tool-calling agent's model (`bench/<c>:route`).

A panel cannot run an agent: an agent needs one reply per turn, tool calls included. So each
turn goes to one member, and the request and the reply pass through as they are (tools, tool
choice, tool calls and results, sampling). The member is the conversation's own when it has one
(gateway/conversations.py), else the best by verdicts (routing/route_order.py).

A member that fails before its first piece (429, 5xx, no connection, nothing within
`gateway.first_token_s`, an empty reply) hands the turn to the next, at most `route_tries`;
its chunks are held until then, so an agent never sees half a turn from a member that then
failed. After the first piece a failure is the stream's error, never a quiet, short success.
Every turn is a call record `<conversation>.<turn>` in the conversation's record, so verdicts
on route turns count for their members as a panel seat's do.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import (
    NotFound,
    PanelFailed,
    TooManyRequests,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamTimeout,
)
from gateway.keys import EVERYONE, Client
from gateway.runtime import Runtime
from gateway.upstream.relay import chunks_of, close, max_output_of
from routing import ROUTER_PANEL, content_text
from routing.route_order import MemberFigures, route_order

ROUTE = ":route"
_OWN_TASKS: set[asyncio.Task[Any]] = set()


@dataclass(frozen=True)
class RouteAsk:
    requested_model: str
    collection: str
    request: dict[str, Any]  # OpenAI chat kwargs passed on as they are (messages, tools, ...)
    stream: bool
    options: dict[str, Any] = field(default_factory=dict)  # the format's own (include_usage)

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.request["messages"]
        return messages


def wanted(model: Any, options: Any, config: Any) -> str | None:
    """The collection when route mode is asked for (the `:route` suffix, `"bench": {"reply":
    "route"}`, or a collection whose `reply` is route); else None."""
    if not isinstance(model, str):
        return None
    name = model.removeprefix("bench/")
    if name.endswith(ROUTE):
        return name.removesuffix(ROUTE)
    if isinstance(options, dict) and options.get("reply") == "route":
        return name
    found = config.catalog.collection(name)
    return name if found is not None and found.reply == "route" else None


@dataclass
class Failure:
    alias: str
    status: str  # rate_limited | cooling | error | timeout | empty
    error: str

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

    @property
    def call(self) -> str:
        return f"{self.conversation}.{self.turn}"

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Bench-Conversation": self.conversation, "X-Bench-Model": self.alias}

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
        }

    async def _record(self, row: dict[str, Any]) -> None:
        if self.recorded:
            return
        self.recorded = True
        if row["status"] == "ok":
            self.runtime.ledger.answered(self.alias)
        await self.runtime.live.flush("turn end")
        await self.runtime.store.add_call(row)


async def start_turn(
    runtime: Runtime,
    ask: RouteAsk,
    client: Client = EVERYONE,
    rng: Callable[[], float] = random.random,
) -> RouteTurn:
    """Give the turn to the first member that starts answering; raise 429 (every member tried
    limited) or 502 (none answered), after recording the turn."""
    config = runtime.config
    collection = config.catalog.collection(ask.collection)
    if collection is None or ask.collection == ROUTER_PANEL:
        known = ", ".join(f"bench/{c.name}{ROUTE}" for c in config.catalog.collections)
        raise NotFound(
            f"Unknown collection {ask.collection!r} for route mode. Collections: {known}.",
            param="model",
        )
    members = collection.members
    shape = collection.shape or "general"
    key_name = client.name
    key = (ask.collection, key_name, *_opening(ask.messages))
    held = await runtime.live.begin_turn(key, members, client)
    now = runtime.clock()
    cooling = runtime.rate_limits.cooling(now, members)
    evidence = runtime.ledger.evidence(cooling, shape, aliases=members)
    figures = {
        m: MemberFigures(
            useful=evidence.standings[m].useful.get(shape, 0),
            last_seated=evidence.standings[m].last_seated,
            cooling=m in cooling,
        )
        for m in members
        if m in evidence.standings
    }
    explore = held.member is None and rng() < config.gateway.route_explore
    order = route_order(members, figures, sticky=held.member, explore=explore)
    if held.new:
        await runtime.store.add_panel(
            {
                "id": held.conversation,
                "created": now,
                "requested_model": ask.requested_model,
                "collection": ask.collection,
                "shape": shape,
                "shape_by": "route",
                "prompt": key[2] + ("\n\n" if key[2] else "") + key[3],
                "key_name": key_name,
                "skipped": [],
                "notes": ["route"],
                "reserves": [],
            }
        )
    failures: list[Failure] = []
    tries = 0
    began = time.monotonic()
    for alias in order:
        if tries >= config.gateway.route_tries:
            break
        permit = await runtime.live.acquire(alias)
        if isinstance(permit, str):
            failures.append(Failure(alias, "cooling", permit))
            continue
        tries += 1
        turn = RouteTurn(runtime, ask, held.conversation, held.turn, alias, shape, failures, began)
        try:
            if await _try(runtime, turn):
                runtime.ledger.seated(alias, runtime.clock())
                runtime.live.settle_turn(key, members, alias)
                return turn
        finally:
            permit.release()
    await runtime.live.flush("turn end")  # the cooldowns learned on the way
    await _record_failed(runtime, ask, held.conversation, held.turn, shape, failures, began)
    raise _refusal(runtime, held.conversation, held.turn, failures)


async def _try(runtime: Runtime, turn: RouteTurn) -> bool:
    """Start the member's reply; True once it has a first piece, else its failure is noted."""
    alias, settings = turn.alias, runtime.config.gateway
    request = _capped(turn.ask.request, runtime, alias)
    params = runtime.config.litellm_params[alias]
    started = time.monotonic()
    assert runtime.open_turn is not None
    try:
        async with asyncio.timeout(settings.first_token_s):
            reply = await runtime.open_turn(
                params, request, settings.seat_timeout_s, stream=turn.ask.stream
            )
            if not turn.ask.stream:
                if _empty(reply):
                    turn.failures.append(Failure(alias, "empty", "the model returned nothing"))
                    return False
                turn.response, turn.first_token_s = reply, round(time.monotonic() - started, 3)
                return True
            turn.stream = reply
            async for chunk in chunks_of(reply):
                turn.held.append(chunk)
                if _has_piece(chunk):
                    turn.first_token_s = round(time.monotonic() - started, 3)
                    return True
            turn.failures.append(Failure(alias, "empty", "the model returned nothing"))
    except TimeoutError:
        why = f"no first piece within {settings.first_token_s:g} s"
        turn.failures.append(Failure(alias, "timeout", why))
    except UpstreamRateLimited as exc:
        until = runtime.rate_limits.cool(alias, exc.retry_after, "rate limited (429)")
        error = f"{runtime.scrub(exc.message)} (cooling {until - runtime.clock():.0f} s)"
        turn.failures.append(Failure(alias, "rate_limited", error))
    except UpstreamError as exc:
        status = "timeout" if isinstance(exc, UpstreamTimeout) else "error"
        turn.failures.append(Failure(alias, status, runtime.scrub(exc.message) or exc.kind))
    if turn.stream is not None:
        await close(turn.stream)
        turn.stream, turn.held = None, []
    return False


def _capped(request: dict[str, Any], runtime: Runtime, alias: str) -> dict[str, Any]:
    """The request with `max_tokens` no higher than the member's known maximum output."""
    model = runtime.config.catalog.model(alias)
    most = max_output_of(model.served) if model is not None else None
    if most is None:
        return request
    capped = dict(request)
    for name in ("max_tokens", "max_completion_tokens"):
        if isinstance(capped.get(name), int) and capped[name] > most:
            capped[name] = most
    return capped


def _has_piece(chunk: Any) -> bool:
    for choice in getattr(chunk, "choices", None) or ():
        delta = choice.delta
        if getattr(delta, "content", None) or getattr(delta, "tool_calls", None):
            return True
        if getattr(delta, "function_call", None):
            return True
    return False


def _empty(response: Any) -> bool:
    choices = getattr(response, "choices", None) or ()
    if not choices:
        return True
    message = choices[0].message
    return not (
        (message.content or "").strip()
        or getattr(message, "tool_calls", None)
        or getattr(message, "function_call", None)
    )


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


def _opening(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """(system text, first user text): with the collection and key, what names a conversation."""
    system = "\n".join(
        content_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    first = next((m for m in messages if m.get("role") == "user"), {})
    return system, content_text(first.get("content"))


async def _record_failed(
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
            "error_class": last.status,
            "seconds": round(time.monotonic() - began, 3),
            "started": now,
            "finished": now,
            "failed_over": [f.view() for f in failures[:-1]],
        }
    )


def _refusal(
    runtime: Runtime, conversation: str, turn: int, failures: list[Failure]
) -> PanelFailed | TooManyRequests:
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
        ends = [runtime.rate_limits.cooldown_of(f.alias) for f in failures]
        wait = min((c.until for c in ends if c is not None), default=runtime.clock() + 1)
        seconds = max(1, math.ceil(wait - runtime.clock()))
        return TooManyRequests(
            f"Every member tried for turn {conversation}.{turn} is rate limited or cooling "
            f"({named}); try again in {seconds} s.",
            headers={**headers, "Retry-After": str(seconds)},
            extra=bench,
        )
    return PanelFailed(
        f"No member answered turn {conversation}.{turn}: {named}.", headers=headers, extra=bench
    )

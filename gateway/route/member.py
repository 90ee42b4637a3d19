"""One member's try at a turn: its stream opened and read up to its first piece.

Every try is streamed from the member, plain turns too: only a stream shows when a member
starts answering, so a silent one is left after `gateway.first_token_s` while a slow but
working one (a long answer, a long think) is not, and an answer is read piece by piece (its
size held to `gateway.max_answer_bytes` as it comes). A turn's first try and the tries that
continue a broken stream (gateway/route/continuation.py) pass through here alike.

A first piece is text, a tool call, or a reasoning delta: a reasoning model that streams its
thinking (litellm relays it as `reasoning_content` / `thinking_blocks`) is answering, however
long before its first word of text. The wait for it (`first_wait`) is `gateway.first_token_s`,
a second longer per `PROMPT_TOKENS_PER_S` tokens of prompt (a provider reads a long prompt
before it writes anything), and for the last member left the whole `gateway.seat_timeout_s`:
leaving it early could only fail the turn, with nobody to hand it to.

A member is asked again only in the two cases gateway/route/again.py names (a short stated
Retry-After on the conversation's member, one 500), and a content filter's refusal ends the
turn's failover (gateway/route/filtered.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from gateway.errors import (
    UpstreamAnswerTooLarge,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamRefused,
    UpstreamTimeout,
)
from gateway.request.failure import FailureClass, classify
from gateway.route.again import Again
from gateway.route.ask import RouteAsk
from gateway.route.filtered import CONTENT_FILTER, names_a_filter, stopped_by_filter
from gateway.route.size import relayed_bytes
from gateway.runtime import Runtime
from gateway.state.learn import Answered
from gateway.upstream.chunks import Chunk, TurnStream
from gateway.upstream.failures import headers_of
from gateway.upstream.params import max_output_of, supported_params
from gateway.upstream.relay import chunks_of, close
from routing import content_text, estimate_tokens

log = logging.getLogger("bench.route")

# How fast the slowest providers an agent meets read a prompt before the first token (tokens
# per second): a 100,000-token context adds 20 s to the wait for a first piece.
PROMPT_TOKENS_PER_S = 5000

# A request's mark (never sent) of the form it takes: a prefill may be refused, then told.
FORM, PREFILL = "_form", "prefill"


@dataclass
class Failure:
    alias: str
    status: str  # rate_limited | cooling | error | timeout | empty
    error: str
    kind: str = ""  # the UpstreamError's kind (refused, context_window, ...), else the status
    http_status: int | None = None  # the provider's, when it answered with one
    wait: float | None = None  # a 429 that stated its wait: seconds until its cooldown ends
    failure: FailureClass | None = None  # its class, as learned; else read from the above

    def __post_init__(self) -> None:
        if self.failure is None:
            self.failure = classify(self.http_status, self.error, self.kind or self.status)

    def view(self) -> dict[str, str | None]:
        said = {"alias": self.alias, "status": self.status, "error": self.error}
        return {**said, "failure": self.failure}


class MemberFailed(Exception):
    """The member gave no first piece; *failure* says why."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.error)
        self.failure = failure


@dataclass
class Opened:
    """A member that has started answering: its stream, and its chunks up to the first piece."""

    alias: str
    stream: TurnStream
    held: list[Chunk]
    first_token_s: float
    dropped: tuple[str, ...]


@dataclass
class Plan:
    """The members still to try for a turn, in order, the tries left, and each failure."""

    order: list[str]
    tries: int
    failures: list[Failure] = field(default_factory=list)
    again: Again = field(default_factory=lambda: Again(None))


async def open_member(
    runtime: Runtime, ask: RouteAsk, alias: str, request: dict[str, Any], wait_s: float
) -> Opened:
    """Open *alias*'s stream for *request* and read it up to its first piece, for at most
        *wait_s*; raise MemberFailed. Either way the outcome is learned first (a 429 cools the
    member, an answer's headers may say it has no requests left)."""
    settings = runtime.config.gateway
    params = runtime.config.litellm_params[alias]
    kept, dropped = ask.hints.resolve(supported_params(params["model"]))
    sent = _capped({**request, **kept}, runtime, alias)
    started = time.monotonic()
    stream: TurnStream | None = None
    held: list[Chunk] = []
    first: float | None = None
    size = 0  # what the held chunks will relay: held to the answer's limit already
    failure = Failure(alias, "empty", "the model returned nothing")
    try:
        try:
            async with asyncio.timeout(wait_s):
                reply = await runtime.upstream.open_turn(
                    params,
                    sent,
                    settings.seat_timeout_s,
                    stream=True,
                    max_answer_bytes=settings.max_answer_bytes,
                    reader=runtime.config.reader(alias),
                )
                stream = cast(TurnStream, reply)  # asked for as a stream: a stream
                async for chunk in chunks_of(stream, settings.seat_timeout_s):
                    size += relayed_bytes(chunk)
                    if size > settings.max_answer_bytes:
                        most = settings.max_answer_bytes
                        said = f"the answer was over the limit of {most} bytes"
                        raise UpstreamAnswerTooLarge(said)
                    held.append(chunk)
                    if has_piece(chunk):
                        first = round(time.monotonic() - started, 3)
                        break
                    if stopped_by_filter(chunk):  # its refusal: never taken for an empty answer
                        said = "finish_reason content_filter before the answer began"
                        failure = Failure(alias, "error", said, CONTENT_FILTER, 200)
                        break
        except TimeoutError:
            late = UpstreamTimeout(f"no first piece within {round(wait_s, 1):g} s")
            failure = await _failed(runtime, alias, late)
        except UpstreamError as exc:
            failure = await _failed(runtime, alias, exc)
        else:  # answered: what its headers say of the model's limits is learned first
            none = None if first is not None else failure.kind or failure.status  # no answer
            heard = Answered(headers_of(stream), none, failure.error)
            learned = await runtime.learning.learn(alias, heard)
            if first is not None:
                return Opened(alias, stream, held, first, dropped)
            failure.failure = learned.failure
    except asyncio.CancelledError:  # the client left meanwhile: the stream is not left open
        if stream is not None:
            await close(stream)
        raise
    if stream is not None:
        await close(stream)
    raise MemberFailed(failure)


async def _failed(runtime: Runtime, alias: str, exc: UpstreamError) -> Failure:
    """The member's failure, once what it says is learned (gateway/state/learn.py): a 429
    cools the member as it would a panel seat; a 400 naming a content filter is that
    filter's refusal (gateway/route/filtered.py)."""
    now = runtime.clock()
    learned = await runtime.learning.learn(alias, exc)
    until, failure = learned.until, learned.failure
    error = runtime.scrub_error(exc.message)
    log.warning(
        "route member %s failed (%s): %s", alias, failure.value if failure else exc.kind, error
    )
    if isinstance(exc, UpstreamRateLimited):
        assert until is not None  # a 429 always cools its model
        left = until - now
        stated = left if exc.retry_after is not None else None
        said = f"{error} (cooling {left:.0f} s)"
        return Failure(alias, "rate_limited", said, exc.kind, exc.status, stated, failure)
    status = "timeout" if isinstance(exc, UpstreamTimeout) else "error"
    kind = exc.kind
    error = error or exc.kind
    if isinstance(exc, UpstreamRefused) and names_a_filter(f"{exc.code or ''} {exc.message}"):
        kind, error = CONTENT_FILTER, f"{error} ({exc.code})" if exc.code else error
    return Failure(alias, status, error, kind, exc.status, None, failure)


async def next_opened(
    runtime: Runtime,
    ask: RouteAsk,
    plan: Plan,
    forms: Callable[[str], Iterable[dict[str, Any]]],
) -> Opened | None:
    """The next member of *plan* that starts answering, or None when none is left (each
    failure noted in the plan). *forms*: the requests to try on a member, in order; a member
    that refuses one (400) is given the next, without counting a try."""
    settings = runtime.config.gateway
    wait_s = first_wait(settings.first_token_s, ask)
    while plan.order and plan.tries > 0:
        alias = plan.order.pop(0)
        permit = await runtime.live.acquire(alias)
        if isinstance(permit, str):
            plan.failures.append(Failure(alias, "cooling", permit))
            continue
        plan.tries -= 1
        cooling = runtime.rate_limits.cooling(runtime.clock(), plan.order)
        last = plan.tries == 0 or all(other in cooling for other in plan.order)
        waited = settings.seat_timeout_s if last else wait_s
        pause: float | None = None
        try:
            for request in forms(alias):
                try:
                    opened = await open_member(runtime, ask, alias, request, waited)
                except MemberFailed as failed:
                    failure = failed.failure
                    plan.failures.append(failure)
                    if failure.kind == "refused" and request.get(FORM) == PREFILL:
                        failure.error = f"refused the prefill: {failure.error}"
                        continue  # the same member, told to continue instead
                    if failure.kind == CONTENT_FILTER:
                        plan.order.clear()  # its refusal is the client's: nobody else is asked
                    pause = plan.again.pause(failure, settings.route_wait_s, waited)
                    break
                runtime.figures.seated(alias, runtime.clock())
                plan.again.opening = False
                return opened
        finally:
            permit.release()
        if pause is not None:  # asked again once, spending no try (gateway/route/again.py)
            plan.again.asked.add(alias)
            plan.failures[-1].error += f"; asked again after {round(pause, 2):g} s"
            await asyncio.sleep(pause)
            plan.order.insert(0, alias)
            plan.tries += 1
    return None


def _capped(request: dict[str, Any], runtime: Runtime, alias: str) -> dict[str, Any]:
    """The request with `max_tokens` no higher than the member's known maximum output, and
    without the gateway's own marks."""
    capped = {k: v for k, v in request.items() if not k.startswith("_")}
    model = runtime.config.catalog.model(alias)
    most = max_output_of(model.served) if model is not None else None
    if most is None:
        return capped
    for name in ("max_tokens", "max_completion_tokens"):
        if isinstance(capped.get(name), int) and capped[name] > most:
            capped[name] = most
    return capped


def first_wait(first_token_s: float, ask: RouteAsk) -> float:
    """How long a member that is not the last may take to its first piece."""
    characters = sum(len(content_text(m.get("content"))) for m in ask.messages)
    return first_token_s + estimate_tokens(characters) / PROMPT_TOKENS_PER_S


def has_piece(chunk: Chunk) -> bool:
    """Does *chunk* carry text, a tool call, or a reasoning delta?"""
    for choice in chunk.choices:
        delta = choice.delta
        if delta.content or delta.tool_calls:
            return True
        if delta.function_call or delta.reasoning_content:
            return True
        if delta.thinking_blocks:
            return True
    return False

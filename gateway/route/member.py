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
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import (
    UpstreamAnswerTooLarge,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamTimeout,
)
from gateway.route.ask import RouteAsk
from gateway.route.size import relayed_bytes
from gateway.runtime import Runtime
from gateway.upstream.params import supported_params
from gateway.upstream.relay import chunks_of, close, max_output_of
from routing import content_text, estimate_tokens

# How fast the slowest providers an agent meets read a prompt before the first token (tokens
# per second): a 100,000-token context adds 20 s to the wait for a first piece.
PROMPT_TOKENS_PER_S = 5000

# A member limited for no longer than this (a stated Retry-After, or a cooldown about to end),
# when no other member can take the turn, is waited for once rather than the turn refused: the
# client would have to wait it out anyway, and then ask again. With an alternative, failing
# over at once stays the rule.
SHORT_WAIT_S = 5.0

# A request's mark (never sent) of the form it takes: a prefill may be refused, then told.
FORM, PREFILL = "_form", "prefill"


@dataclass
class Failure:
    alias: str
    status: str  # rate_limited | cooling | error | timeout | empty
    error: str
    kind: str = ""  # the UpstreamError's kind (refused, context_window, ...), else the status

    def view(self) -> dict[str, str]:
        return {"alias": self.alias, "status": self.status, "error": self.error}


class MemberFailed(Exception):
    """The member gave no first piece; *failure* says why."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.error)
        self.failure = failure


@dataclass
class Opened:
    """A member that has started answering: its stream, and its chunks up to the first piece."""

    alias: str
    stream: Any
    held: list[Any]
    first_token_s: float
    dropped: tuple[str, ...]


@dataclass
class Plan:
    """The members still to try for a turn, in order, the tries left, and each failure."""

    order: list[str]
    tries: int
    failures: list[Failure] = field(default_factory=list)
    waited: bool = False  # a short wait on a limited member was waited out already


async def open_member(
    runtime: Runtime, ask: RouteAsk, alias: str, request: dict[str, Any], wait_s: float
) -> Opened:
    """Open *alias*'s stream for *request* and read it up to its first piece, for at most
    *wait_s*; raise MemberFailed (a 429 cools the member first)."""
    settings = runtime.config.gateway
    params = runtime.config.litellm_params[alias]
    kept, dropped = ask.hints.resolve(supported_params(params["model"]))
    sent = _capped({**request, **kept}, runtime, alias)
    started = time.monotonic()
    stream: Any = None
    held: list[Any] = []
    size = 0  # what the held chunks will relay: held to the answer's limit already
    try:
        async with asyncio.timeout(wait_s):
            stream = await runtime.upstream.open_turn(
                params,
                sent,
                settings.seat_timeout_s,
                stream=True,
                max_answer_bytes=settings.max_answer_bytes,
                reader=runtime.config.reader(alias),
            )
            async for chunk in chunks_of(stream, settings.seat_timeout_s):
                size += relayed_bytes(chunk)
                if size > settings.max_answer_bytes:
                    limit = settings.max_answer_bytes
                    raise UpstreamAnswerTooLarge(f"the answer was over the limit of {limit} bytes")
                held.append(chunk)
                if has_piece(chunk):
                    first = round(time.monotonic() - started, 3)
                    return Opened(alias, stream, held, first, dropped)
        failure = Failure(alias, "empty", "the model returned nothing")
    except TimeoutError:
        failure = Failure(alias, "timeout", f"no first piece within {round(wait_s, 1):g} s")
    except UpstreamRateLimited as exc:
        until = runtime.rate_limits.cool(alias, exc.retry_after, "rate limited (429)")
        error = f"{runtime.scrub_error(exc.message)} (cooling {until - runtime.clock():.0f} s)"
        failure = Failure(alias, "rate_limited", error, exc.kind)
    except UpstreamError as exc:
        status = "timeout" if isinstance(exc, UpstreamTimeout) else "error"
        failure = Failure(alias, status, runtime.scrub_error(exc.message) or exc.kind, exc.kind)
    except asyncio.CancelledError:  # the client left meanwhile: the stream is not left open
        if stream is not None:
            await close(stream)
        raise
    if stream is not None:
        await close(stream)
    raise MemberFailed(failure)


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
    while plan.order and plan.tries > 0 or await _waited_out(runtime, plan):
        alias = plan.order.pop(0)
        permit = await runtime.live.acquire(alias)
        if isinstance(permit, str):
            plan.failures.append(Failure(alias, "cooling", permit))
            continue
        plan.tries -= 1
        cooling = runtime.rate_limits.cooling(runtime.clock(), plan.order)
        last = plan.tries == 0 or all(other in cooling for other in plan.order)
        try:
            for request in forms(alias):
                try:
                    waited = settings.seat_timeout_s if last else wait_s
                    opened = await open_member(runtime, ask, alias, request, waited)
                except MemberFailed as failed:
                    plan.failures.append(failed.failure)
                    if failed.failure.kind == "refused" and request.get(FORM) == PREFILL:
                        failed.failure.error = f"refused the prefill: {failed.failure.error}"
                        continue  # the same member, told to continue instead
                    break
                runtime.figures.seated(alias, runtime.clock())
                return opened
        finally:
            permit.release()
    return None


async def _waited_out(runtime: Runtime, plan: Plan) -> bool:
    """With no member left to try: wait out the shortest limit among the members that were
    limited or cooling, if it ends within SHORT_WAIT_S and none was waited out yet this turn;
    True when that member is to be tried again."""
    if plan.waited:
        return False
    now = runtime.clock()
    waits = []
    for failure in plan.failures:
        cooldown = runtime.rate_limits.cooldown_of(failure.alias)
        if failure.status in ("rate_limited", "cooling") and cooldown is not None:
            waits.append((cooldown.until - now, failure.alias))
    if not waits or min(waits)[0] > SHORT_WAIT_S:
        return False
    seconds, alias = min(waits)
    plan.waited = True
    await asyncio.sleep(max(0.0, seconds) + 0.05)  # just past its end: its cooldown is over
    plan.order.insert(0, alias)
    plan.tries = max(plan.tries, 1)
    return True


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


def has_piece(chunk: Any) -> bool:
    """Does *chunk* carry text, a tool call, or a reasoning delta?"""
    for choice in getattr(chunk, "choices", None) or ():
        delta = choice.delta
        if getattr(delta, "content", None) or getattr(delta, "tool_calls", None):
            return True
        if getattr(delta, "function_call", None) or getattr(delta, "reasoning_content", None):
            return True
        if getattr(delta, "thinking_blocks", None):
            return True
    return False

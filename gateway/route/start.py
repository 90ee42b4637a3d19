"""Route mode: a collection as one tool-calling agent's model (`bench/<c>:route`).

A panel cannot run an agent: an agent needs one reply per turn, tool calls included. So each
turn goes to one member, and the request and the reply pass through as they are (tools, tool
choice, tool calls and results, sampling). The member is the conversation's own when it has one
(gateway/state/conversations.py), else the best by verdicts (routing/route_order.py).

A member that fails before its first piece (429, 5xx, no connection, nothing within
`gateway.first_token_s`, an empty reply) hands the turn to the next, at most `route_tries`;
its chunks are held until then, so an agent never sees half a turn from a member that then
failed. After the first piece a failure is the stream's error, never a quiet, short success.
Every turn is a call record `<conversation>.<turn>` (gateway/route/turn.py), so verdicts
on route turns count for their members as a panel seat's do.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

from gateway.access.keys import EVERYONE, Client
from gateway.errors import NotFound, UpstreamError, UpstreamRateLimited, UpstreamTimeout
from gateway.route.ask import ROUTE, RouteAsk
from gateway.route.turn import Failure, RouteTurn, record_failed, refusal
from gateway.runtime import Runtime
from gateway.upstream.relay import chunks_of, close, max_output_of
from routing import ROUTER_PANEL, content_text
from routing.refusals import did_you_mean, echo
from routing.route_order import MemberFigures, route_order


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
        names = [c.name for c in config.catalog.collections]
        known = ", ".join(f"bench/{name}{ROUTE}" for name in names)
        hint = did_you_mean(ask.collection, names, "bench/{}" + ROUTE)
        raise NotFound(
            f"Unknown collection {echo(ask.collection)!r} for route mode{hint}. "
            f"Collections: {known}.",
            param="model",
        )
    members = collection.members
    shape = collection.shape or "general"
    key_name = client.name
    key = (ask.collection, key_name, *_opening(ask.messages))
    held = await runtime.live.begin_turn(key, members, client)
    now = runtime.clock()
    cooling = runtime.rate_limits.cooling(now, members)
    evidence = runtime.figures.evidence(cooling, shape, aliases=members)
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
                runtime.figures.seated(alias, runtime.clock())
                runtime.live.settle_turn(key, members, alias)
                return turn
        finally:
            permit.release()
    await runtime.live.flush("turn end")  # the cooldowns learned on the way
    await record_failed(runtime, ask, held.conversation, held.turn, shape, failures, began)
    raise refusal(runtime, held.conversation, held.turn, failures)


async def _try(runtime: Runtime, turn: RouteTurn) -> bool:
    """Start the member's reply; True once it has a first piece, else its failure is noted."""
    alias, settings = turn.alias, runtime.config.gateway
    request = _capped(turn.ask.request, runtime, alias)
    params = runtime.config.litellm_params[alias]
    started = time.monotonic()
    try:
        async with asyncio.timeout(settings.first_token_s):
            reply = await runtime.upstream.open_turn(
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


def _opening(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """(system text, first user text): with the collection and key, what names a conversation."""
    system = "\n".join(
        content_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    first = next((m for m in messages if m.get("role") == "user"), {})
    return system, content_text(first.get("content"))

"""Route mode: a collection as one tool-calling agent's model (`bench/<c>:route`).

A panel cannot run an agent: an agent needs one reply per turn, tool calls included. So each
turn goes to one member, and the request and the reply pass through as they are (tools, tool
choice, tool calls and results, sampling). The member is the conversation's own when it has one
(gateway/state/conversations.py), else the best by verdicts (routing/route_order.py).

A member that fails before its first piece (429, 5xx, no connection, nothing within
`gateway.first_token_s`, an empty reply) hands the turn to the next, at most `route_tries`
(gateway/route/member.py); its chunks are held until then, so an agent never sees half a turn
from a member that then failed. Only a short stated Retry-After on the conversation's member,
and one 500, are asked again first (gateway/route/again.py); a content filter's refusal is the
client's, never handed on (gateway/route/filtered.py). A stream that breaks after its first
piece is continued on the next member (gateway/route/turn.py), never passed off as a quiet,
short success.
Every turn is a call record `<conversation>.<turn>` (gateway/route/turn.py), so verdicts
on route turns count for their members as a panel seat's do.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from gateway.errors import NotFound, PayloadTooLarge
from gateway.request.client import EVERYONE, Client
from gateway.route.again import Again
from gateway.route.ask import ROUTE, RouteAsk
from gateway.route.member import Plan, next_opened
from gateway.route.refusal import record_failed, refusal
from gateway.route.turn import RouteTurn
from gateway.runtime import Runtime
from gateway.store.rows import PanelRow
from routing import (
    ROUTER_PANEL,
    Catalog,
    Evidence,
    content_text,
    conversation_text,
    estimate_tokens,
    window_of,
)
from routing.health import RETIRED, Record
from routing.prior import standing_prior
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
            f"Unknown collection {echo(ask.collection)!r} for route mode{hint or '.'} "
            f"Collections: {known}.",
            param="model",
        )
    members = collection.members
    shape = collection.shape or "general"
    key_name = client.name
    opening = _opening(ask.messages)
    if ask.session is not None:  # the session the client names is the conversation
        key, fresh = (ask.collection, key_name, SESSION, ask.session), False
    else:  # else its opening, continued only by a request that carries earlier turns
        key, fresh = (ask.collection, key_name, *opening), not ask.continues
    now = runtime.clock()
    cooling = runtime.rate_limits.cooling(now, members)
    evidence = runtime.figures.evidence(cooling, shape, aliases=members)
    _refuse_unheld(config.catalog, ask, members, evidence)
    held = await runtime.live.begin_turn(key, members, client, fresh)
    # retired members are never tried; benched ones go last (as cooling ones) until their trial
    unwell = runtime.model_health.unseatable()
    figures = {
        m: MemberFigures(
            useful=evidence.standings[m].useful.get(shape, 0),
            prior=standing_prior(
                evidence.score_on(m, shape),
                evidence.prior_weight,
                evidence.standings[m].judged.get(shape, 0),
            ),
            last_seated=evidence.standings[m].last_seated,
            cooling=m in cooling or m in unwell,
        )
        for m in members
        if m in evidence.standings
    }
    explore = held.member is None and rng() < config.gateway.route_explore
    callable_members = tuple(m for m in members if unwell.get(m, _WELL).health != RETIRED)
    order = route_order(callable_members, figures, sticky=held.member, explore=explore)
    if held.new:
        await runtime.store.add_panel(
            PanelRow(
                id=held.conversation,
                created=now,
                requested_model=ask.requested_model,
                collection=ask.collection,
                shape=shape,
                shape_by="route",
                prompt=runtime.scrub(opening[0] + ("\n\n" if opening[0] else "") + opening[1]),
                key_name=key_name,
                skipped=[],
                notes=["route"],
                reserves=[],
            )
        )
    holder = held.member or (order[0] if order else None)  # the conversation's member
    plan = Plan(order, config.gateway.route_tries, again=Again(holder))
    began = time.monotonic()
    opened = await next_opened(runtime, ask, plan, lambda alias: [ask.request])
    if opened is not None:
        runtime.live.settle_turn(key, members, opened.alias)
        turn = held.turn
        return RouteTurn(
            runtime, ask, held.conversation, turn, opened.alias, shape, plan, began, key,
            members, opened,
        )  # fmt: skip
    await runtime.live.flush("turn end")  # the cooldowns learned on the way
    await record_failed(runtime, ask, held.conversation, held.turn, shape, plan.failures, began)
    raise refusal(runtime, held.conversation, held.turn, plan.failures)


def _refuse_unheld(
    catalog: Catalog, ask: RouteAsk, members: tuple[str, ...], evidence: Evidence
) -> None:
    """413 before anything is sent or recorded when no member's context window (the configured
    one, or the smaller one its provider has shown) can hold the turn's prompt, as a panel is
    refused (routing/choose.py): each member would only refuse it, or cut it short."""
    tokens = estimate_tokens(len(conversation_text(ask.messages)))
    windows = {}
    for alias in members:
        model = catalog.model(alias)
        window = None if model is None else window_of(model, evidence)
        if window is None or tokens <= window:
            return
        windows[alias] = window
    held = "; ".join(
        f"{alias}: context window {window} tokens cannot hold the prompt (~{tokens} tokens)"
        for alias, window in windows.items()
    )
    raise PayloadTooLarge(
        f"The prompt (~{tokens} tokens) fits no member of {ask.collection}: {held}"
    )


# Stands where a conversation's system text would in the key of one known by its session: no
# system text holds it.
SESSION = "\x00session"


def _opening(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """(system text, first user text): with the collection and key, what names a conversation
    that no session names."""
    system = "\n".join(
        content_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    first = next((m for m in messages if m.get("role") == "user"), {})
    return system, content_text(first.get("content"))


_WELL = Record()

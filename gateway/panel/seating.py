"""The one path from a caller to a running panel, whatever door it came in by (a client format's
route, an MCP `ask`): worker admission, the key's scope and rpm, the seats chosen and marked, the
panel put on the record, the run started.

Kept in one place so the MCP tools cannot drift from the HTTP routes: the same 503 at capacity,
the same 403 outside a key's scope, the same 429 over its rpm, counted once per panel. Choosing
is routing's (`routing.Choice`, called inside the live state's seating step); a refusal it
raises becomes the client's error here."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from gateway.errors import BadRequest, NotFound, PayloadTooLarge, Unseatable
from gateway.panel import reply
from gateway.panel.ask import Ask
from gateway.panel.reply import PanelFacts
from gateway.panel.run import PanelRun
from gateway.request.client import EVERYONE, Client
from gateway.runtime import Runtime
from gateway.state.admission import Ticket
from gateway.state.limits import Refused
from gateway.store.rows import PanelRow
from routing import (
    Choice,
    NothingToSeat,
    Panel,
    PanelRequest,
    PromptTooLarge,
    Refusal,
    UnknownAlias,
    UnknownCollection,
    UnknownShape,
)


@contextmanager
def admitted(runtime: Runtime) -> Iterator[Ticket]:
    """A ticket for a panel of up to `gateway.max_calls` seats (503 at capacity), given back
    if what follows fails; once a run holds it, the run's end gives it back."""
    ticket = runtime.admission.admit(runtime.config.gateway.max_calls)
    try:
        yield ticket
    except BaseException:
        ticket.release()
        raise


async def start_panel(runtime: Runtime, client: Client, ask: Ask, ticket: Ticket) -> PanelRun:
    """Seat *ask* for *client* (403 outside its scope, or for a nominee outside the models of
    its collections; 429 over its rpm) and start the run, which holds *ticket* until it ends.
    A refusal seats nobody and calls nothing."""
    catalog = runtime.config.catalog
    with runtime.keys.admitted(client, ask.collection, ask.nominees, catalog):  # scope, rpm
        run = await seat(runtime, ask, client)
    ticket.resize(len(run.facts.plan.seats))
    run.start().add_done_callback(ticket.release)
    return run


_REFUSALS = {
    UnknownCollection: NotFound,
    UnknownShape: BadRequest,
    UnknownAlias: BadRequest,
    PromptTooLarge: PayloadTooLarge,
    NothingToSeat: Unseatable,
}


def new_panel_id(now: float) -> str:
    """`p`, the second the panel was seated (8 hex digits), then 48 random bits.

    Starting with the time puts a new panel's rows, and its seats' (`<panel id>.<seat>`), at the
    right-hand edge of the records' primary keys, on pages just written, rather than on a random
    page of a large index (measured in docs/scaling.md); the random part keeps ids made in the
    same second, by any replica, apart."""
    return f"p{int(now) & 0xFFFFFFFF:08x}{secrets.token_hex(6)}"


async def seat(runtime: Runtime, ask: Ask, client: Client = EVERYONE) -> PanelRun:
    """Choose and mark the panel, put it on the record, and return its run (not yet started).

    Choosing and marking are one step of the live state (gateway/state): on the board, one
    event-loop step under its lock; in Redis, one round trip. Either way a panel arriving a
    moment later, in this worker or another, already sees these seats taken and rotates to
    other models."""
    now = runtime.clock()
    panel_id = new_panel_id(now)
    catalog = runtime.config.catalog
    notes: tuple[str, ...] = ()
    if ask.images:  # a vision panel: a shape that seats models able to see, and only those
        shape, shape_by, note = catalog.shape_for_images(ask.shape, ask.shape_by)
        ask = dataclasses.replace(ask, shape=shape, shape_by=shape_by)
        notes = (note,)
    wanted = PanelRequest(
        collection=ask.collection,
        shape=ask.shape,
        nominees=ask.nominees,
        prompt_tokens=ask.prompt_tokens,
        seed=int(panel_id[1:], 16),
        images=ask.images,
    )

    choice = Choice(wanted, catalog, now, notes)
    try:
        seating = await runtime.live.seat(choice, ask.shape, ask.nominees, client, now)
    except Refusal as refusal:
        error = _REFUSALS.get(type(refusal), BadRequest)
        raise error(refusal.message, param=refusal.param) from None
    plan = seating.plan
    facts = PanelFacts(
        panel_id=panel_id,
        requested_model=ask.requested_model,
        collection=ask.collection,
        shape=ask.shape,
        shape_by=ask.shape_by,
        plan=plan,
        created=now,
    )
    try:
        await _record_panel(runtime, ask, plan, panel_id, now, client.name)
    except BaseException:
        for permit in seating.permits.values():
            if not isinstance(permit, Refused):
                permit.release()
        raise
    return PanelRun(runtime, facts, ask, seating.permits)


async def _record_panel(
    runtime: Runtime, ask: Ask, plan: Panel, panel_id: str, now: float, key_name: str
) -> None:
    await runtime.store.add_panel(
        PanelRow(
            id=panel_id,
            created=now,
            requested_model=ask.requested_model,
            collection=ask.collection,
            shape=ask.shape,
            shape_by=ask.shape_by,
            prompt=runtime.scrub(ask.prompt),
            key_name=key_name,
            skipped=reply.skipped_view(plan),
            notes=list(plan.notes),
            reserves=list(plan.reserves),
        )
    )

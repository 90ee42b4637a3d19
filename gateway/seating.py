"""Seating a panel: routing's choice, made visible to the next panel and put on the record.

Choosing and marking the seats happen in one event-loop step with no await between them, and
under the board's lock, so a panel arriving a moment later, in this worker or another, already
sees these seats taken and rotates to other models.
"""

from __future__ import annotations

import secrets

from gateway.asking import ChatAsk
from gateway.errors import BadRequest, NotFound, PayloadTooLarge, Unseatable
from gateway.reply import PanelFacts, skipped_view
from gateway.runtime import Runtime
from routing import (
    Ask,
    NothingToSeat,
    PromptTooLarge,
    Refusal,
    UnknownAlias,
    UnknownCollection,
    UnknownShape,
    choose_panel,
)

_REFUSALS = {
    UnknownCollection: NotFound,
    UnknownShape: BadRequest,
    UnknownAlias: BadRequest,
    PromptTooLarge: PayloadTooLarge,
    NothingToSeat: Unseatable,
}


def new_panel_id() -> str:
    return "p" + secrets.token_hex(6)


def seat(runtime: Runtime, ask: ChatAsk, key_name: str = "local") -> tuple[PanelFacts, dict]:
    """Choose and mark the panel; return its facts and the panel record to write."""
    now = runtime.clock()
    panel_id = new_panel_id()
    routing_ask = Ask(
        collection=ask.collection,
        shape=ask.shape,
        nominees=ask.nominees,
        prompt_tokens=ask.prompt_tokens,
        seed=int(panel_id[1:], 16),
    )
    with runtime.board.locked():  # no other worker seats a panel in between
        evidence = runtime.ledger.evidence(runtime.rate_limits.cooling(now), ask.shape)
        try:
            plan = choose_panel(routing_ask, runtime.config.catalog, evidence, now)
        except Refusal as refusal:
            error = _REFUSALS.get(type(refusal), BadRequest)
            raise error(refusal.message, param=refusal.param) from None
        for chair in plan.seats:
            runtime.ledger.seated(chair.alias, now)
    facts = PanelFacts(
        panel_id=panel_id,
        requested_model=ask.requested_model,
        collection=ask.collection,
        shape=ask.shape,
        shape_by=ask.shape_by,
        plan=plan,
        created=now,
    )
    record = {
        "id": panel_id,
        "created": now,
        "requested_model": ask.requested_model,
        "collection": ask.collection,
        "shape": ask.shape,
        "shape_by": ask.shape_by,
        "prompt": ask.prompt,
        "key_name": key_name,
        "skipped": skipped_view(plan),
        "notes": list(plan.notes),
        "reserves": list(plan.reserves),
    }
    return facts, record

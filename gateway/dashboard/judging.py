"""`GET /panels/{panel}`: one panel's page, made for judging it (contract §13, Judging).

The prompt and every seat's answer at once (side by side on a wide screen, stacked on a narrow
one: the stylesheet's grid), each answer's markdown drawn safely with its sentences, list items
and table rows markable as real or false; a verdict per seat, a note, and the keys `j`/`k` (next,
previous seat) and `u`/`n` (useful, not useful). Marked claims and the note go with the verdict
(`POST /ui/verdict`, the fields of `POST /bench/verdict`). With `gateway.blind_judging` the seats
are Seat A, B, C... and no model is named on the page, nor in what it fetches, until that seat is
judged (gateway/dashboard/views.py).

Where to go next: the next panel owed a verdict, older than this one if any is, else the newest.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.access.sessions import dashboard_root
from gateway.dashboard.views import (
    TEMPLATES,
    access_of,
    drawn,
    html,
    page_or_sign_in,
    seat_views,
)
from gateway.endpoints.common import runtime_of
from gateway.runtime import Runtime


async def panel_page(request: Request) -> Response:
    reply, token, shown = page_or_sign_in(request)
    if not shown:
        return reply
    runtime = runtime_of(request)
    wanted = request.path_params["panel"]
    panel = await runtime.store.panel(wanted)
    if panel is None:
        page = TEMPLATES.get_template("panel.html").render(
            csrf=token, root=dashboard_root(request), missing=wanted[:200]
        )
        return html(reply, page, 404)
    blind = runtime.config.gateway.blind_judging
    seats = seat_views(panel["id"], panel.pop("seats"), blind, access_of(request).seat_key)
    for seat in seats:
        verdict = seat.get("verdict") or {}
        seat["marked"] = {
            **{claim: "real" for claim in verdict.get("real") or ()},
            **{claim: "false" for claim in verdict.get("false") or ()},
        }
    context = {
        "csrf": token,
        "root": dashboard_root(request),
        "panel": panel,
        "seats": seats,
        "blind": blind,
        "owed": sum(s["owed"] for s in seats),
        "next_owed": await next_owed(runtime, panel["id"]),
    }
    return html(reply, await drawn("panel.html", context), 200)


async def next_owed(runtime: Runtime, after: str | None) -> str | None:
    """The panel to judge next: the newest owed one older than *after*, else the newest owed
    one that is not *after* (None: no other panel is owed a verdict)."""
    store = runtime.store
    if after is not None:
        older: dict[str, Any] = await store.panels_page(1, before=after, owed=True)
        if older["panels"]:
            return str(older["panels"][0]["id"])
    newest = await store.panels_page(2, owed=True)
    return next((str(p["id"]) for p in newest["panels"] if p["id"] != after), None)

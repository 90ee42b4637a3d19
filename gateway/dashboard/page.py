"""The dashboard (contract §13): `GET /`, a page the gateway renders itself, its `/ui/...`
routes, and each panel's judging page (`GET /panels/{panel}`, gateway/dashboard/judging.py).
Server-rendered with Jinja2 (gateway/dashboard/views.py), a small script of its own, nothing
from a CDN.

Who may open it, and the CSRF check on its posts: gateway/access/sessions.py. Its Usage section (the
month chosen by `?month=YYYY-MM`): gateway/dashboard/usage.py. Live updates: an SSE
stream (`/ui/events`) that tells the page when a panel, seat or verdict was written, so the page
fetches the panel list again (`/ui/panels`) without a reload.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gateway.access.keys import KEY_NAME, key_record, new_key
from gateway.access.sessions import SESSION_COOKIE, check_csrf, dashboard_root
from gateway.dashboard import health
from gateway.dashboard.judging import next_owed, panel_page
from gateway.dashboard.models import evidence_context
from gateway.dashboard.usage import usage_section
from gateway.dashboard.views import (
    ADMIN,
    NAMING,
    SECURITY_HEADERS,
    access_of,
    allowed,
    drawn,
    html,
    json_reply,
    page_or_sign_in,
    seat_call,
    seat_views,
)
from gateway.endpoints.common import read_body, runtime_of
from gateway.endpoints.records import page_query
from gateway.errors import BadRequest, Conflict, NotFound
from gateway.records.verdicts import check_verdict, judge
from gateway.request.bounds import json_object
from gateway.request.client import LOCAL
from gateway.runtime import Runtime
from gateway.store.pages import UnknownCursor
from gateway.suite import drafts
from gateway.suite.figures import totals

POLL_S = 1.0  # how often an open event stream looks for new records
STREAM_S = 25.0  # an event stream ends after this; the browser reconnects (`retry`)
KEEP_ALIVE_S = 10.0


async def index(request: Request) -> Response:
    reply, token, shown = page_or_sign_in(request)
    if not shown:
        return reply
    limit, before, owed = page_query(request.query_params)
    runtime = runtime_of(request)
    panels = await _panel_list(runtime, limit, before, owed, access_of(request).seat_key)
    keys = await runtime.store.keys()
    usage = await usage_section(runtime, request.query_params.get("month"))
    await runtime.live.refresh()
    context = {
        "csrf": token,
        "root": dashboard_root(request),
        "page": panels,
        "owed_only": owed,
        "limit": limit,
        "before": before,
        "signed_in": access_of(request).signed_in(request),
        "keys": keys,
        "require_keys": runtime.config.gateway.require_keys,
        "usage": usage,
        **evidence_context(runtime),
    }
    scored = await request.app.state.suite.figures()  # the Models table's suite column (§20)
    for row in context["models"]:
        row["suite"] = totals(scored.get(row["alias"], {}))
    context["drafts"] = await drafts.waiting(runtime.store)  # the Suite drafts section
    context.update(health.health_context(runtime, context["models"], context["connections"]))
    return html(reply, await drawn("index.html", context), 200)


async def panels_fragment(request: Request) -> Response:
    """The panel list alone, as `GET /` renders it: what the page swaps in on a change."""
    allowed(request)
    limit, before, owed = page_query(request.query_params)
    key = access_of(request).seat_key
    page = await _panel_list(runtime_of(request), limit, before, owed, key)
    shown = {"page": page, "owed_only": owed, "limit": limit, "root": dashboard_root(request)}
    body = await drawn("_panels.html", shown)
    return HTMLResponse(body, headers=SECURITY_HEADERS)


async def _panel_list(
    runtime: Runtime, limit: int, before: str | None, owed: bool, key: bytes
) -> Any:
    """A page of panels with each one's seats as the page shows them (*key*: a blind page's
    seat ids'), and the next owed one."""
    try:
        page = await runtime.store.panels_page(limit, before, owed)
    except UnknownCursor:
        raise NotFound(f"Unknown panel {before!r} in `before`.", param="before") from None
    blind = runtime.config.gateway.blind_judging
    for panel in page["panels"]:
        panel["views"] = seat_views(panel["id"], panel["seats"], blind, key)
    if owed and before is None:  # this page starts with it
        page["next_owed"] = page["panels"][0]["id"] if page["panels"] else None
    else:
        page["next_owed"] = await next_owed(runtime, None)
    return page


async def events(request: Request) -> Response:
    """`event: change` whenever a panel, seat or verdict was written since the last look."""
    allowed(request)
    store = runtime_of(request).store

    async def stream() -> AsyncIterator[str]:
        yield f"retry: {int(POLL_S * 1000)}\n\n"
        last = await store.change_marker()
        yield f"event: hello\ndata: {json.dumps(last)}\n\n"
        began = quiet = time.monotonic()
        while time.monotonic() - began < STREAM_S:
            await asyncio.sleep(POLL_S)
            marker = await store.change_marker()
            if marker != last:
                last, quiet = marker, time.monotonic()
                yield f"event: change\ndata: {json.dumps(marker)}\n\n"
            elif time.monotonic() - quiet > KEEP_ALIVE_S:
                quiet = time.monotonic()
                yield ": keep-alive\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


async def sign_in(request: Request) -> Response:
    """The session cookie, where its pages are (`root`: the page's script goes there), and
    the browser's device token (sent with its next sign-ins: gateway/access/sessions.py)."""
    check_csrf(request)
    body = json_object(await read_body(request, 10_000), "The sign-in")
    cookies = Response()
    root, device = access_of(request).sign_in(
        body.get("token"), request, cookies, body.get("device")
    )
    reply = json_reply({"signed_in": True, "root": root + "/", "device": device})
    for cookie in cookies.headers.getlist("set-cookie"):
        reply.headers.append("set-cookie", cookie)
    return reply


async def sign_out(request: Request) -> Response:
    """Ends every admin session on the server (gateway/access/sessions.py), when asked from
    one; the cookie goes too."""
    check_csrf(request)
    access = access_of(request)
    reply = Response(json.dumps({"signed_in": False}), media_type="application/json")
    if access.signed_in(request):
        access.sign_out()
        path = dashboard_root(request) + "/"
        reply.delete_cookie(SESSION_COOKIE, path=path, httponly=True, samesite="strict")
    return reply


async def give_verdict(request: Request) -> Response:
    """A verdict from a page: what `POST /bench/verdict` does, for whoever opened the page,
    and blind when the page hid the seat's model (gateway.blind_judging). The seat is judged
    now, so the reply names its model: what the page shows in place of its label."""
    who = allowed(request)
    check_csrf(request)
    runtime = runtime_of(request)
    verdict = await runtime.bodies.read(await read_body(request, 1_000_000), check_verdict)
    blind = runtime.config.gateway.blind_judging
    posted = verdict["call"]  # a blind page's seat id, or a call id
    verdict["call"] = await seat_call(runtime, posted, access_of(request).seat_key)
    written, call = await judge(runtime, verdict, by=who, owner=None, blind=blind)
    shown = {name: call[name] for name in NAMING}
    blind_now = bool(call["verdict"]["blind"])
    return json_reply({"call": posted, "recorded": written, "blind": blind_now, "shown": shown})


async def create_key(request: Request) -> Response:
    """A new gateway key, returned this once (only its digest is kept)."""
    allowed(request)
    check_csrf(request)
    body = json_object(await read_body(request, 10_000), "The key")
    runtime = runtime_of(request)
    name, collections, rpm = _new_key_fields(body, runtime)
    key = new_key()
    if not await runtime.store.add_key(key_record(name, key, collections, rpm)):
        raise Conflict(f"A key named {name!r} already exists.", param="name")
    return json_reply({"name": name, "key": key})


async def revoke_key(request: Request) -> Response:
    allowed(request)
    check_csrf(request)
    body = json_object(await read_body(request, 10_000), "The revocation")
    name = body.get("name")
    if not isinstance(name, str) or not await runtime_of(request).store.revoke_key(name):
        raise NotFound(f"No active key named {str(name)[:80]!r}.", param="name")
    return json_reply({"name": name, "revoked": True})


def _new_key_fields(
    body: dict[str, Any], runtime: Runtime
) -> tuple[str, list[str] | None, int | None]:
    name = body.get("name")
    if not isinstance(name, str) or not KEY_NAME.match(name) or name in (LOCAL, ADMIN):
        raise BadRequest(
            "A key name is 1-64 letters, digits, '.', '_' or '-' (not 'local' or 'admin').",
            param="name",
        )
    collections = body.get("collections") or None
    if collections is not None:
        known = {c.name for c in runtime.config.catalog.collections} | {"panel"}
        if not isinstance(collections, list) or not all(c in known for c in collections):
            raise BadRequest(f"`collections` must name known collections: {sorted(known)}.")
    rpm = body.get("rpm")
    if rpm is not None and (not isinstance(rpm, int) or isinstance(rpm, bool) or rpm < 1):
        raise BadRequest("`rpm` must be a positive whole number.", param="rpm")
    return name, collections, rpm


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/panels/{panel}", panel_page, methods=["GET"]),
    Route("/ui/panels", panels_fragment, methods=["GET"]),
    Route("/ui/events", events, methods=["GET"]),
    Route("/ui/signin", sign_in, methods=["POST"]),
    Route("/ui/signout", sign_out, methods=["POST"]),
    Route("/ui/verdict", give_verdict, methods=["POST"]),
    Route("/ui/keys", create_key, methods=["POST"]),
    Route("/ui/keys/revoke", revoke_key, methods=["POST"]),
    *health.ROUTES,
    Mount("/ui/static", StaticFiles(packages=[("gateway.dashboard", "ui/static")]), name="static"),
]

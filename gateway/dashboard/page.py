"""The dashboard (contract §13): `GET /`, a page the gateway renders itself, and its `/ui/...`
routes. Server-rendered with Jinja2 (autoescaping on: an answer's markup never reaches the page
as markup), a small script of its own, nothing from a CDN.

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

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gateway.access.keys import KEY_NAME, LOCAL, key_record, new_key
from gateway.access.sessions import ADMIN_TOKEN_ENV, Access, check_csrf, csrf_token
from gateway.bodies import json_object
from gateway.dashboard import markdown as safe_markdown
from gateway.dashboard.usage import usage_section
from gateway.endpoints.common import read_body, runtime_of
from gateway.endpoints.records import page_query
from gateway.errors import BadRequest, Conflict, NotFound, Unauthorized
from gateway.records import standing as evidence
from gateway.records.verdicts import check_verdict, judge
from gateway.runtime import Runtime
from gateway.store.pages import UnknownCursor

POLL_S = 1.0  # how often an open event stream looks for new records
STREAM_S = 25.0  # an event stream ends after this; the browser reconnects (`retry`)
KEEP_ALIVE_S = 10.0
ADMIN = "admin"  # who judged, on verdicts given from a signed-in dashboard
# The page runs only its own script and styles: an injected tag or handler would not run even if
# something escaped the escaping.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

TEMPLATES = Environment(
    loader=PackageLoader("gateway.dashboard", "ui/templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
TEMPLATES.filters["answer"] = safe_markdown.render


def access_of(request: Request) -> Access:
    access: Access = request.app.state.access
    return access


def _when(moment: float | None) -> str:
    return "-" if moment is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment))


TEMPLATES.filters["when"] = _when


async def index(request: Request) -> Response:
    access = access_of(request)
    reply = HTMLResponse("", headers=SECURITY_HEADERS)
    token = csrf_token(request, reply)
    if not access.allowed(request):
        page = TEMPLATES.get_template("signin.html").render(
            csrf=token, token_set=access.admin_token is not None, env=ADMIN_TOKEN_ENV
        )
        return _html(reply, page, 401)
    limit, before, owed = page_query(request.query_params)
    runtime = runtime_of(request)
    try:
        panels = await runtime.store.panels_page(limit, before, owed)
    except UnknownCursor:
        raise NotFound(f"Unknown panel {before!r} in `before`.", param="before") from None
    keys = await runtime.store.keys()
    usage = await usage_section(runtime, request.query_params.get("month"))
    await runtime.live.refresh()
    context = {
        "csrf": token,
        "page": panels,
        "owed_only": owed,
        "limit": limit,
        "before": before,
        "signed_in": access.signed_in(request),
        "keys": keys,
        "usage": usage,
        **_evidence(runtime),
    }
    return _html(reply, TEMPLATES.get_template("index.html").render(context), 200)


async def panels_fragment(request: Request) -> Response:
    """The panel list alone, as `GET /` renders it: what the page swaps in on a change."""
    _allowed(request)
    limit, before, owed = page_query(request.query_params)
    try:
        page = await runtime_of(request).store.panels_page(limit, before, owed)
    except UnknownCursor:
        raise NotFound(f"Unknown panel {before!r} in `before`.", param="before") from None
    body = TEMPLATES.get_template("_panels.html").render(page=page, owed_only=owed, limit=limit)
    return HTMLResponse(body, headers=SECURITY_HEADERS)


async def events(request: Request) -> Response:
    """`event: change` whenever a panel, seat or verdict was written since the last look."""
    _allowed(request)
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
    check_csrf(request)
    body = json_object(await read_body(request, 10_000), "The sign-in")
    reply = Response(json.dumps({"signed_in": True}), media_type="application/json")
    access_of(request).sign_in(body.get("token"), request, reply)
    return reply


async def sign_out(request: Request) -> Response:
    check_csrf(request)
    reply = Response(json.dumps({"signed_in": False}), media_type="application/json")
    reply.delete_cookie("bench_session", httponly=True, samesite="strict")
    return reply


async def give_verdict(request: Request) -> Response:
    """A verdict from the page: what `POST /bench/verdict` does, for whoever opened the page."""
    who = _allowed(request)
    check_csrf(request)
    runtime = runtime_of(request)
    verdict = await runtime.bodies.read(await read_body(request, 1_000_000), check_verdict)
    blind = runtime.config.gateway.blind_judging
    written, _ = await judge(runtime, verdict, by=who, owner=None, blind=blind)
    return _json({"call": verdict["call"], "recorded": written})


async def create_key(request: Request) -> Response:
    """A new gateway key, returned this once (only its digest is kept)."""
    _allowed(request)
    check_csrf(request)
    body = json_object(await read_body(request, 10_000), "The key")
    runtime = runtime_of(request)
    name, collections, rpm = _new_key_fields(body, runtime)
    key = new_key()
    if not await runtime.store.add_key(key_record(name, key, collections, rpm)):
        raise Conflict(f"A key named {name!r} already exists.", param="name")
    return _json({"name": name, "key": key})


async def revoke_key(request: Request) -> Response:
    _allowed(request)
    check_csrf(request)
    body = json_object(await read_body(request, 10_000), "The revocation")
    name = body.get("name")
    if not isinstance(name, str) or not await runtime_of(request).store.revoke_key(name):
        raise NotFound(f"No active key named {str(name)[:80]!r}.", param="name")
    return _json({"name": name, "revoked": True})


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


def _allowed(request: Request) -> str:
    """Who is using the dashboard (`local` on loopback, `admin` signed in); 401 for anyone
    else, a gateway key included."""
    access = access_of(request)
    if access.open_without_sign_in(request):
        return LOCAL
    if access.signed_in(request):
        return ADMIN
    raise Unauthorized(f"Sign in to the dashboard with the admin token ({ADMIN_TOKEN_ENV}).")


def _evidence(runtime: Runtime) -> dict[str, Any]:
    now = runtime.clock()
    models = evidence.model_rows(runtime)
    for row in models:
        row["useful_rate"] = evidence.useful_rate(row)
        until = row["cooling_until"]
        row["cooling_left"] = None if until is None else max(0.0, until - now)
    caps = evidence.model_caps(runtime)
    return {
        "models": models,
        "chart": chart(models),
        "caps": caps,
        "connections": evidence.connection_rows(runtime),
        "collections": evidence.collection_rows(runtime),
    }


def chart(models: list[dict[str, Any]]) -> dict[str, Any]:
    """Bar geometry for the SVG: per model, seats (scaled to the most seated) and useful rate."""
    row_h, label_w, bar_w = 22, 110, 200
    most = max((m["seated"] for m in models), default=0) or 1
    bars = []
    for i, m in enumerate(models):
        rate = m["useful_rate"]
        bars.append(
            {
                "alias": m["alias"],
                "y": 20 + i * row_h,
                "seats_w": round(bar_w * m["seated"] / most, 1),
                "seats": m["seated"],
                "rate_w": round(bar_w * (rate or 0.0), 1),
                "rate": "-" if rate is None else f"{rate:.0%}",
            }
        )
    width = label_w + 2 * (bar_w + 60)
    return {
        "bars": bars,
        "width": width,
        "height": 30 + len(models) * row_h,
        "label_w": label_w,
        "bar_w": bar_w,
        "rate_x": label_w + bar_w + 60,
    }


def _html(reply: HTMLResponse, body: str, status: int) -> HTMLResponse:
    reply.body = body.encode()
    reply.status_code = status
    reply.headers["content-length"] = str(len(reply.body))
    return reply


def _json(body: dict[str, Any]) -> Response:
    return Response(json.dumps(body), media_type="application/json", headers=SECURITY_HEADERS)


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/ui/panels", panels_fragment, methods=["GET"]),
    Route("/ui/events", events, methods=["GET"]),
    Route("/ui/signin", sign_in, methods=["POST"]),
    Route("/ui/signout", sign_out, methods=["POST"]),
    Route("/ui/verdict", give_verdict, methods=["POST"]),
    Route("/ui/keys", create_key, methods=["POST"]),
    Route("/ui/keys/revoke", revoke_key, methods=["POST"]),
    Mount("/ui/static", StaticFiles(packages=[("gateway.dashboard", "ui/static")]), name="static"),
]

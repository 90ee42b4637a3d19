"""What every dashboard page shares: its templates (Jinja2, autoescaping on: an answer's markup
never reaches a page as markup), the headers that keep it to its own script, who may use it, and
each seat as a page shows it (named, or blind as Seat A, B, C... until judged)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from gateway.access.sessions import ADMIN_TOKEN_ENV, Access, csrf_token, dashboard_root
from gateway.dashboard import markdown as safe_markdown
from gateway.errors import Unauthorized
from gateway.request.client import LOCAL

if TYPE_CHECKING:
    from gateway.runtime import Runtime

ADMIN = "admin"  # who judged, on verdicts given from a signed-in dashboard
SEAT_TOKEN = "seat-"  # a blind page's seat ids: <panel>.seat-<digest>
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


async def drawn(template: str, context: dict[str, Any]) -> str:
    """A page with answers in it, drawn in a thread: drawing is bounded (gateway/dashboard/
    markdown.py), but a page of many long answers still takes a while, and the event loop
    serves every panel meanwhile."""
    return await asyncio.to_thread(TEMPLATES.get_template(template).render, context)


def _when(moment: float | None) -> str:
    return "-" if moment is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment))


def _lately(moment: float | None) -> str:
    """A moment in a narrow column: its time alone if today, else its day and minute."""
    if moment is None:
        return "-"
    if time.strftime("%Y-%m-%d", time.localtime(moment)) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M:%S", time.localtime(moment))
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))


TEMPLATES.filters["when"] = _when
TEMPLATES.filters["lately"] = _lately
# A seat's model, as blind judging hides it until the seat is judged
NAMING = ("alias", "model", "connection")


def access_of(request: Request) -> Access:
    access: Access = request.app.state.access
    return access


def allowed(request: Request) -> str:
    """Who is using the dashboard (`local` on loopback, `admin` signed in); 401 for anyone
    else, a gateway key included."""
    access = access_of(request)
    if access.open_without_sign_in(request):
        return LOCAL
    if access.signed_in(request):
        return ADMIN
    raise Unauthorized(f"Sign in to the dashboard with the admin token ({ADMIN_TOKEN_ENV}).")


def page_or_sign_in(request: Request) -> tuple[HTMLResponse, str, bool]:
    """A reply to fill, its CSRF token, and whether the page may be shown; when not, the reply
    already holds the sign-in page (401)."""
    access = access_of(request)
    reply = HTMLResponse("", headers=SECURITY_HEADERS)
    token = csrf_token(request, reply)
    if access.allowed(request):
        return reply, token, True
    page = TEMPLATES.get_template("signin.html").render(
        csrf=token,
        root=dashboard_root(request),
        token_set=access.admin_token is not None,
        env=ADMIN_TOKEN_ENV,
    )
    return html(reply, page, 401), token, False


def seat_views(
    panel_id: str, seats: list[dict[str, Any]], blind: bool, key: bytes = b""
) -> list[dict[str, Any]]:
    """The seats as a page shows them, in the order it shows them. Each has `call`, `label`,
    `shown` (whether its model may be named) and `owed`. Blind (gateway.blind_judging), the
    seats are labelled Seat A, B, C... in an order drawn from their call ids, so neither the
    label nor the place says which model sat where; their `call` is a `seat_token` (a call id
    says which seat it was: `p1.member3`, the collection's third member); a seat's model,
    connection and error (an error can name its model) are left out until it is judged, and
    those of a seat that cannot be judged until no seat of its panel is owed a verdict."""
    views = []
    for seat in seats:
        view = dict(seat)
        view["call"] = seat.get("call") or seat.get("id")
        view["owed"] = (
            seat["status"] == "ok" and seat["seat"] != "merger" and seat.get("verdict") is None
        )
        views.append(view)
    if not blind:
        for view in views:
            view["label"], view["shown"] = view["alias"], True
        return views
    views.sort(key=lambda v: hashlib.sha256(f"{panel_id}\x00{v['call']}".encode()).digest())
    settled = not any(v["owed"] for v in views)
    for n, view in enumerate(views):
        view["label"] = f"Seat {_letters(n)}"
        view["call"] = seat_token(panel_id, view["call"], key)
        judgeable = view["status"] == "ok"
        view["shown"] = view.get("verdict") is not None or (settled and not judgeable)
        if not view["shown"]:
            for name in (*NAMING, "seat", "error", "error_class", "failed_over"):
                view.pop(name, None)
            view["withheld"] = seat.get("error") is not None
    return views


def seat_token(panel_id: str, call: str, key: bytes) -> str:
    """A blind page's id for a seat: its panel's id and a digest of its call id keyed with the
    gateway's secret (Access.seat_key), which says nothing about the seat."""
    digest = hmac.new(key, f"{panel_id}\x00{call}".encode(), hashlib.sha256).hexdigest()
    return f"{panel_id}.{SEAT_TOKEN}{digest[:20]}"


async def seat_call(runtime: Runtime, token: str, key: bytes) -> str:
    """The call a blind page's seat id stands for (*token* itself when it is not one)."""
    panel_id, _, digest = token.rpartition(".")
    if not digest.startswith(SEAT_TOKEN):
        return token
    panel = await runtime.store.panel(panel_id)
    for seat in panel["seats"] if panel is not None else ():
        call = str(seat.get("call") or seat.get("id"))
        if hmac.compare_digest(seat_token(panel_id, call, key), token):
            return call
    return token  # unknown: the verdict says so, as for any unknown call


def _letters(n: int) -> str:
    """A, B, ... Z, AA, AB, ..."""
    name = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def html(reply: HTMLResponse, body: str, status: int) -> HTMLResponse:
    reply.body = body.encode()
    reply.status_code = status
    reply.headers["content-length"] = str(len(reply.body))
    return reply


def json_reply(body: dict[str, Any]) -> Response:
    return Response(json.dumps(body), media_type="application/json", headers=SECURITY_HEADERS)

"""The suite's routes (contract §20): `GET /bench/suite` (runs, tasks, each model's figures) and
`POST /bench/suite/run` (the dashboard's admin: loopback without keys, or signed in), which
starts a run and answers 202 at once; a second run while one goes is a 409. And the drafts made
from verdicts' claims: `GET /bench/suite/drafts`, `POST /bench/suite/drafts/{draft}/approve`
and `/reject` (the admin's too)."""

from __future__ import annotations

from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response

from gateway.access.sessions import ADMIN_TOKEN_ENV, SESSION_COOKIE, Access, check_csrf
from gateway.endpoints.common import read_body, runtime_of
from gateway.errors import BadRequest, Conflict, NotFound, Unauthorized
from gateway.replies import JSONResponse
from gateway.request.bounds import json_object
from gateway.suite import drafts
from gateway.suite.run import Busy
from gateway.suite.service import Refused, Suite

MAX_NAMES = 500


def suite_of(request: Request) -> Suite:
    return cast(Suite, request.app.state.suite)


async def bench_suite(request: Request) -> Response:
    await runtime_of(request).keys.client(request)
    return JSONResponse(await suite_of(request).view())


def _admin(request: Request) -> None:
    """The dashboard's admin only (loopback without keys, or signed in); 401 for anyone else,
    a gateway key included (a draft holds another key's prompt)."""
    access: Access = request.app.state.access
    if not access.allowed(request):
        raise Unauthorized(f"Sign in to the dashboard with the admin token ({ADMIN_TOKEN_ENV}).")
    if SESSION_COOKIE in request.cookies and request.method == "POST":
        check_csrf(request)


async def run_suite(request: Request) -> Response:
    _admin(request)
    raw = await read_body(request, 100_000)
    body = json_object(raw, "The suite run") if raw.strip() else {}
    unknown = set(body) - {"models", "tasks", "quick"}
    if unknown:
        name = sorted(unknown)[0]
        raise BadRequest(
            f"Unknown field {name[:80]!r}: a run takes models, tasks, quick.", param=name
        )
    quick = body.get("quick", False)
    if not isinstance(quick, bool):
        raise BadRequest("`quick` must be true or false.", param="quick")
    try:
        run = await suite_of(request).start(_names(body, "models"), _names(body, "tasks"), quick)
    except Refused as exc:
        if exc.unknown:
            raise NotFound(str(exc), param=exc.param) from None
        raise BadRequest(str(exc), param=exc.param) from None
    except Busy as exc:
        raise Conflict(f"A suite run is going ({exc}); one runs at a time.") from None
    return JSONResponse({"run": run}, status_code=202)


async def suite_drafts(request: Request) -> Response:
    _admin(request)
    waiting = await drafts.waiting(runtime_of(request).store)
    return JSONResponse({"drafts": [drafts.view(d) for d in waiting]})


async def approve_draft(request: Request) -> Response:
    return await _decide(request, drafts.APPROVED)


async def reject_draft(request: Request) -> Response:
    return await _decide(request, drafts.REJECTED)


async def _decide(request: Request, state: str) -> Response:
    _admin(request)
    runtime = runtime_of(request)
    draft = request.path_params["draft"]
    decided = await drafts.decide(runtime.store, draft, state, runtime.clock())
    if decided is None:
        raise NotFound(f"No draft {draft[:80]!r} waits (GET /bench/suite/drafts).", param="draft")
    return JSONResponse({"id": decided.id, "state": state})


def _names(body: dict[str, Any], field: str) -> list[str] | None:
    value = body.get(field)
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or not value
        or len(value) > MAX_NAMES
        or not all(isinstance(v, str) and 0 < len(v) <= 200 for v in value)
    ):
        raise BadRequest(f"`{field}` must be a list of 1 to {MAX_NAMES} names.", param=field)
    return value

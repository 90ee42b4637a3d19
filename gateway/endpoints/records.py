"""The records under /bench: verdicts, panels, calls, conversations, models' figures and
usage. A key reaches only its own; another key's record is a 404, as if it did not exist."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.endpoints.common import read_body, runtime_of
from gateway.endpoints.suite import suite_of
from gateway.errors import BadRequest, NotFound
from gateway.records.pending import parse_pending, pending
from gateway.records.standing import model_rows
from gateway.records.usage import month_of, usage_body
from gateway.records.verdicts import check_verdict, judge
from gateway.replies import JSONResponse
from gateway.request.bounds import json_object
from gateway.store.pages import MAX_LIMIT, UnknownCursor


async def post_verdict(request: Request) -> Response:
    runtime = runtime_of(request)
    client = await runtime.keys.client(request)
    raw = await read_body(request, 1_000_000)
    verdict = await runtime.bodies.read(raw, check_verdict)
    written, _ = await judge(runtime, verdict, by=client.name, owner=client.owner)
    return JSONResponse({"call": verdict["call"], "recorded": written})


async def list_panels(request: Request) -> Response:
    """`GET /bench/panels?limit=&before=&owed=true`: recent panels, newest first, with every
    seat; a key sees its own. `next` is the `before` of the following page."""
    runtime = runtime_of(request)
    client = await runtime.keys.client(request)
    limit, before, owed = page_query(request.query_params)
    try:
        page = await runtime.store.panels_page(limit, before, owed, owner=client.owner)
    except UnknownCursor:
        raise NotFound(f"Unknown panel {before!r} in `before`.", param="before") from None
    return JSONResponse(page)


def page_query(params: Any) -> tuple[int, str | None, bool]:
    """(limit, before, owed) from a page's query string; 400 for a value it cannot mean."""
    raw = params.get("limit", "20")
    # ASCII digits only: '²'.isdigit() is true, and int('²') fails
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 6) or not 1 <= int(raw) <= MAX_LIMIT:
        raise BadRequest(f"`limit` must be a whole number from 1 to {MAX_LIMIT}.", param="limit")
    before = params.get("before") or None
    if before is not None and len(before) > 200:
        raise BadRequest("`before` must be a panel id.", param="before")
    owed = params.get("owed", "false").lower()
    if owed not in ("true", "false", "1", "0"):
        raise BadRequest("`owed` must be true or false.", param="owed")
    return int(raw), before, owed in ("true", "1")


async def get_panel(request: Request) -> Response:
    return await _record(request, "panel", runtime_of(request).store.panel)


async def get_call(request: Request) -> Response:
    return await _record(request, "call", runtime_of(request).store.call)


async def get_conversation(request: Request) -> Response:
    """A route conversation and its turns, each a call record (another key's is a 404)."""
    client = await runtime_of(request).keys.client(request)
    wanted = request.path_params["conversation"]
    found = await runtime_of(request).store.panel(wanted, owner=client.owner)
    if found is None or found.get("shape_by") != "route":
        raise NotFound(f"Unknown conversation {wanted!r}.", param="conversation")
    turns = found.pop("seats")
    return JSONResponse({"conversation": wanted, **found, "turns": turns})


async def _record(
    request: Request, kind: str, fetch: Callable[..., Awaitable[dict[str, Any] | None]]
) -> Response:
    """A panel or call as recorded, for the key that made it (any, when keys are off). Another
    key's record is a 404 in the same words as one that does not exist."""
    client = await runtime_of(request).keys.client(request)
    wanted = request.path_params[kind]
    found = await fetch(wanted, owner=client.owner)
    if found is None:
        raise NotFound(f"Unknown {kind} {wanted!r}.", param=kind)
    return JSONResponse(found)


async def bench_models(request: Request) -> Response:
    runtime = runtime_of(request)
    await runtime.keys.client(request)
    await runtime.live.refresh()
    rows = model_rows(runtime)
    scored = await suite_of(request).figures()  # each model's suite figures per shape (§20)
    for row in rows:
        row["suite"] = scored.get(row["alias"], {})
    return JSONResponse({"models": rows})


async def bench_usage(request: Request) -> Response:
    """Calls, tokens and errors per day, model, connection and key for one month: a key sees
    its own usage, `local` (keys not required) every key's."""
    runtime = runtime_of(request)
    client = await runtime.keys.client(request)
    zone = runtime.config.gateway.quota_day_tz
    year, month = month_of(request.query_params.get("month"), runtime.clock(), zone)
    return JSONResponse(await usage_body(runtime.store, year, month, zone, client.owner))


async def post_pending(request: Request) -> Response:
    runtime = runtime_of(request)
    client = await runtime.keys.client(request)
    raw = await read_body(request, 1_000_000)
    calls, limit = parse_pending(json_object(raw or b"{}"))
    return JSONResponse(await pending(runtime, client, calls, limit))

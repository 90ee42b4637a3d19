"""The HTTP routes. A panel route is read -> seat -> render through its format's module; the
rest (models, records, verdicts, health) are small enough to live here."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway.asking import COLLECTION_PREFIX, MERGED
from gateway.errors import GatewayError, NotFound, PayloadTooLarge
from gateway.formats import Format, chat
from gateway.openapi import describe
from gateway.panel import seat
from gateway.runtime import Runtime
from gateway.verdicts import parse_verdict
from routing import ROUTER_PANEL

DESCRIPTION = describe()


def runtime_of(request: Request) -> Runtime:
    return request.app.state.runtime


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to be over the limit."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


async def chat_completions(request: Request) -> Response:
    return await ask_panel(request, chat)


async def ask_panel(request: Request, fmt: Format) -> Response:
    """Every panel endpoint: the format reads the request into an Ask, the panel is seated, the
    format renders the run. A refusal before seating seats nobody and calls no upstream."""
    runtime = runtime_of(request)
    try:
        client = await runtime.gatekeeper.client(request)
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        body = await runtime.bodies.read(raw, fmt.check)  # a heavy one off the loop
        ask = fmt.read(body, {k.lower(): v for k, v in request.headers.items()}, runtime.config)
        client.check(ask.collection)
        run = await seat(runtime, ask, key_name=client.name)
    except GatewayError as error:
        return fmt.render_error(error)
    return await fmt.render_run(run)


async def list_models(request: Request) -> Response:
    client = await runtime_of(request).gatekeeper.client(request)
    catalog = runtime_of(request).config.catalog
    limits = catalog.limits
    data: list[dict[str, Any]] = []
    for c in catalog.collections:
        data.append(
            {
                "id": COLLECTION_PREFIX + c.name,
                "object": "model",
                "created": 0,
                "owned_by": "bench",
                "description": c.description,
                "tags": list(c.tags),
                "members": list(c.members),
                "explorers": min(limits.max_explorers, max(0, limits.max_calls - len(c.members))),
                "shape": c.shape or "general",
                "reply": c.reply,
            }
        )
    data.append(
        {
            "id": COLLECTION_PREFIX + ROUTER_PANEL,
            "object": "model",
            "created": 0,
            "owned_by": "bench",
            "description": "the router's panel: primary, second opinion, explorers",
            "tags": [],
            "members": [],
            "explorers": limits.max_explorers,
            "shape": "general",
            "reply": "panel",
        }
    )
    data = [entry for entry in data if client.may_use(entry["id"].removeprefix(COLLECTION_PREFIX))]
    merged = [{**entry, "id": entry["id"] + MERGED, "reply": "merged"} for entry in data]
    return JSONResponse({"object": "list", "data": data + merged})


async def post_verdict(request: Request) -> Response:
    runtime = runtime_of(request)
    client = await runtime.gatekeeper.client(request)
    raw = await read_body(request, 1_000_000)
    verdict = parse_verdict(raw)
    call = await runtime.store.call(verdict["call"])
    if call is None:
        raise NotFound(f"Unknown call {verdict['call']!r}.", param="call")
    client.check(call["collection"])
    outcome = await runtime.store.record_verdict({**verdict, "key_name": client.name})
    assert outcome is not None  # the call exists, and calls are never deleted
    written, previous = outcome
    if written:
        prior = None if previous is None else bool(previous["useful"])
        runtime.ledger.verdict(call["alias"], call["shape"], bool(verdict["useful"]), prior)
    return JSONResponse({"call": verdict["call"], "recorded": written})


async def get_panel(request: Request) -> Response:
    return await _record(request, "panel", runtime_of(request).store.panel)


async def get_call(request: Request) -> Response:
    return await _record(request, "call", runtime_of(request).store.call)


async def _record(request: Request, kind: str, fetch) -> Response:
    """A panel or call as recorded, for callers whose key may see its collection."""
    client = await runtime_of(request).gatekeeper.client(request)
    wanted = request.path_params[kind]
    found = await fetch(wanted)
    if found is None:
        raise NotFound(f"Unknown {kind} {wanted!r}.", param=kind)
    client.check(found["collection"])
    return JSONResponse(found)


async def bench_models(request: Request) -> Response:
    runtime = runtime_of(request)
    await runtime.gatekeeper.client(request)
    rows = []
    for model in runtime.config.catalog.models:
        cooldown = runtime.rate_limits.cooldown_of(model.alias)
        rows.append(
            {
                "alias": model.alias,
                "connection": model.connection,
                "role": model.role,
                "family": model.family,
                **runtime.ledger.row(model.alias),
                "cooling_until": cooldown.until if cooldown else None,
                "cooling_why": cooldown.why if cooldown else None,
                "rpm_used": runtime.rate_limits.rpm_use(model.alias),
            }
        )
    return JSONResponse({"models": rows})


async def openapi_json(request: Request) -> Response:
    return JSONResponse(DESCRIPTION)


async def healthz(request: Request) -> Response:
    if not runtime_of(request).ready:
        return JSONResponse({"status": "starting"}, status_code=503)
    return JSONResponse({"status": "ok"})


ROUTES = [
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
    Route("/chat/completions", chat_completions, methods=["POST"]),
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/bench/verdict", post_verdict, methods=["POST"]),
    Route("/bench/panels/{panel}", get_panel, methods=["GET"]),
    Route("/bench/calls/{call}", get_call, methods=["GET"]),
    Route("/bench/models", bench_models, methods=["GET"]),
    Route("/healthz", healthz, methods=["GET"]),
    Route("/openapi.json", openapi_json, methods=["GET"]),
]

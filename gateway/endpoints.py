"""The HTTP routes. A panel route is read -> seat -> render through its format's module; the
rest (models, records, verdicts, health) are small enough to live here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway import route
from gateway.asking import COLLECTION_PREFIX, MERGED, collection_named, json_object
from gateway.errors import BadRequest, GatewayError, NotFound, PayloadTooLarge
from gateway.evidence import model_rows
from gateway.formats import Format, anthropic, chat, completions, gemini, ollama, responses
from gateway.keys import Client
from gateway.openapi import describe
from gateway.pending import post_pending
from gateway.runtime import Runtime
from gateway.seating import start_panel
from gateway.store.pages import MAX_LIMIT, UnknownCursor
from gateway.usage import month_of, usage_body
from gateway.verdicts import check_verdict, judge
from routing import ROUTER_PANEL
from routing.errors import echo

DESCRIPTION = describe()


def runtime_of(request: Request) -> Runtime:
    return cast(Runtime, request.app.state.runtime)  # (starlette types app state as Any)


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


# -- Anthropic Messages ---------------------------------------------------------------------


async def anthropic_messages(request: Request) -> Response:
    return await ask_panel(request, anthropic)


async def anthropic_count_tokens(request: Request) -> Response:
    """The gateway's own estimate of the prompt's tokens: nothing is seated, called or written."""
    runtime = runtime_of(request)
    try:
        client = await runtime.gatekeeper.client(request)
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        body = await runtime.bodies.read(raw, anthropic.check)  # a heavy one off the loop
        headers = {k.lower(): v for k, v in request.headers.items()}
        collection, tokens = anthropic.count(body, headers, runtime.config)
        client.check(collection)
    except GatewayError as error:
        return anthropic.render_error(error)
    return JSONResponse({"input_tokens": tokens})


# -- every panel ------------------------------------------------------------------------------


async def ask_panel(request: Request, fmt: Format, *, google_keys: bool = False) -> Response:
    """Every panel endpoint: the format reads the request into an Ask, the panel is seated, the
    format renders the run. A refusal before seating seats nobody and calls no upstream.
    *google_keys*: a Gemini route, where keys also come as `x-goog-api-key` or `?key=`.

    Admission comes before the body is read: a worker at capacity refuses at once (503), at
    the cost of a header check, not of reading and parsing a body it will not serve."""
    runtime = runtime_of(request)
    ticket = None
    try:
        client = await runtime.gatekeeper.client(request, google=google_keys)
        ticket = runtime.admission.admit(runtime.config.gateway.max_calls)
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        routed = route_asked(raw, fmt, runtime.config)
        if routed is not None:
            ticket.resize(1)
            turn = await start_route(runtime, fmt, client, *routed)
            turn.on_end.append(ticket.release)
            return await fmt.render_route(turn)  # type: ignore[attr-defined, no-any-return]
        body = await runtime.bodies.read(raw, fmt.check)  # a heavy one off the loop
        ask = fmt.read(body, {k.lower(): v for k, v in request.headers.items()}, runtime.config)
        run = await start_panel(runtime, client, ask, ticket)
    except GatewayError as error:
        if ticket is not None:
            ticket.release()
        return fmt.render_error(error)
    except BaseException:
        if ticket is not None:
            ticket.release()
        raise
    return await fmt.render_run(run)


def route_asked(raw: bytes, fmt: Format, config: Any) -> tuple[dict[str, Any], str] | None:
    """(body, collection) when the request asks for route mode, else None. The body is parsed
    here only when it may: a panel's body is read once, by its format."""
    named = getattr(fmt, "model", None)  # Gemini names the model in the path
    if (
        b"route" not in raw
        and not config.route_collections
        and not (isinstance(named, str) and "route" in named)
    ):
        return None
    body = json_object(raw)
    collection = route.wanted(named or body.get("model"), body.get("bench"), config)
    return None if collection is None else (body, collection)


async def start_route(
    runtime: Runtime, fmt: Format, client: Client, body: dict[str, Any], collection: str
) -> route.RouteTurn:
    """Read the route turn in the format's words, check the key's scope and rpm, and give the
    turn to a member (gateway/route.py)."""
    reader = getattr(fmt, "read_route", None)
    if reader is None:
        raise BadRequest(
            f"Route mode (bench/{collection}:route) is not yet available in the "
            f"{_format_name(fmt)} format; ask it through /v1/chat/completions, "
            "/v1/messages, /v1/responses, /api/chat or Gemini's generateContent.",
            param="model",
        )
    ask = reader(body, collection)
    with runtime.gatekeeper.admitted(client, collection):  # scope, then the key's rpm
        return await route.start_turn(runtime, ask, client.name)


def _format_name(fmt: Format) -> str:
    name = getattr(fmt, "__name__", type(fmt).__name__)
    return name.rsplit(".", 1)[-1].removesuffix("Format")


async def list_models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": await _listed(request)})


async def _listed(request: Request) -> list[dict[str, Any]]:
    """Every collection the caller's key may use as a model, as /v1/models lists them."""
    client = await runtime_of(request).gatekeeper.client(request)
    return listed(request, client)


def listed(request: Request, client: Client) -> list[dict[str, Any]]:
    """The collections a client may use, as /v1/models lists them (each also `:merged`); the
    Ollama and Gemini listings show the same entries in their own shapes."""
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
    return data + merged


# -- OpenAI Responses, legacy completions, one model (issue 13) ---------------------------------


async def create_response(request: Request) -> Response:
    return await ask_panel(request, responses)


async def create_completion(request: Request) -> Response:
    return await ask_panel(request, completions)


async def get_model(request: Request) -> Response:
    """One name /v1/models lists (`bench/<c>`, or the bare `<c>`, `:merged` or not); any other
    name, or one outside the key's collections, is a 404 as if it did not exist."""
    wanted = request.path_params["model"]
    for entry in await _listed(request):
        if wanted in (entry["id"], entry["id"].removeprefix(COLLECTION_PREFIX)):
            return JSONResponse(entry)
    raise NotFound(f"Unknown model {wanted[:200]!r}; GET /v1/models lists them.", param="model")


async def post_verdict(request: Request) -> Response:
    runtime = runtime_of(request)
    client = await runtime.gatekeeper.client(request)
    raw = await read_body(request, 1_000_000)
    verdict = await runtime.bodies.read(raw, check_verdict)
    written = await judge(runtime, verdict, by=client.name, owner=client.owner)
    return JSONResponse({"call": verdict["call"], "recorded": written})


async def list_panels(request: Request) -> Response:
    """`GET /bench/panels?limit=&before=&owed=true`: recent panels, newest first, with every
    seat; a key sees its own. `next` is the `before` of the following page."""
    runtime = runtime_of(request)
    client = await runtime.gatekeeper.client(request)
    limit, before, owed = page_query(request.query_params)
    try:
        page = await runtime.store.panels_page(limit, before, owed, owner=client.owner)
    except UnknownCursor:
        raise NotFound(f"Unknown panel {before!r} in `before`.", param="before") from None
    return JSONResponse(page)


def page_query(params: Any) -> tuple[int, str | None, bool]:
    """(limit, before, owed) from a page's query string; 400 for a value it cannot mean."""
    raw = params.get("limit", "20")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
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
    client = await runtime_of(request).gatekeeper.client(request)
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
    client = await runtime_of(request).gatekeeper.client(request)
    wanted = request.path_params[kind]
    found = await fetch(wanted, owner=client.owner)
    if found is None:
        raise NotFound(f"Unknown {kind} {wanted!r}.", param=kind)
    return JSONResponse(found)


async def bench_models(request: Request) -> Response:
    runtime = runtime_of(request)
    await runtime.gatekeeper.client(request)
    return JSONResponse({"models": model_rows(runtime)})


async def bench_usage(request: Request) -> Response:
    """Calls, tokens and errors per day, model, connection and key for one month: a key sees
    its own usage, `local` (keys not required) every key's."""
    runtime = runtime_of(request)
    client = await runtime.gatekeeper.client(request)
    zone = runtime.config.gateway.quota_day_tz
    year, month = month_of(request.query_params.get("month"), runtime.clock(), zone)
    return JSONResponse(await usage_body(runtime.store, year, month, zone, client.owner))


# -- Ollama and Gemini ---------------------------------------------------------------------------


async def ollama_chat(request: Request) -> Response:
    return await ask_panel(request, ollama.CHAT)


async def ollama_generate(request: Request) -> Response:
    return await ask_panel(request, ollama.GENERATE)


async def ollama_tags(request: Request) -> Response:
    try:
        client = await runtime_of(request).gatekeeper.client(request)
    except GatewayError as error:
        return ollama.render_error(error)
    return Response(ollama.tags_body(listed(request, client)), media_type="application/json")


async def ollama_show(request: Request) -> Response:
    try:
        client = await runtime_of(request).gatekeeper.client(request)
        body = json_object(await read_body(request, 1_000_000))
        name = ollama.model_name(body.get("model", body.get("name")))
        entry = _entry(request, client, name)
    except GatewayError as error:
        return ollama.render_error(error)
    return Response(ollama.show_body(entry), media_type="application/json")


async def ollama_version(request: Request) -> Response:
    return JSONResponse({"version": version("bench-gateway")})


async def gemini_generate(request: Request) -> Response:
    fmt = gemini.GeminiFormat(gemini.model_of(request.path_params["model"]))
    return await ask_panel(request, fmt, google_keys=True)


async def gemini_stream(request: Request) -> Response:
    sse = request.query_params.get("alt") == "sse"
    fmt = gemini.GeminiFormat(gemini.model_of(request.path_params["model"]), stream=True, sse=sse)
    return await ask_panel(request, fmt, google_keys=True)


async def gemini_count_tokens(request: Request) -> Response:
    runtime = runtime_of(request)
    try:
        client = await runtime.gatekeeper.client(request, google=True)
        _entry(request, client, gemini.model_of(request.path_params["model"]))
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        body = await runtime.bodies.read(raw, gemini.COUNT_CHECK)  # a heavy one off the loop
        tokens = gemini.count_tokens(body, runtime.config.gateway.max_messages)
    except GatewayError as error:
        return gemini.render_error(error)
    return JSONResponse({"totalTokens": tokens})


async def gemini_models(request: Request) -> Response:
    try:
        client = await runtime_of(request).gatekeeper.client(request, google=True)
    except GatewayError as error:
        return gemini.render_error(error)
    return JSONResponse({"models": [gemini.model_body(e) for e in listed(request, client)]})


async def gemini_model(request: Request) -> Response:
    try:
        client = await runtime_of(request).gatekeeper.client(request, google=True)
        entry = _entry(request, client, gemini.model_of(request.path_params["name"]))
    except GatewayError as error:
        return gemini.render_error(error)
    return JSONResponse(gemini.model_body(entry))


def _entry(request: Request, client: Client, name: object) -> dict[str, Any]:
    """The listed collection a name (`bench/<c>` or `<c>`, `:merged` or not) stands for."""
    collection, merged = collection_named(name)
    if not client.may_use(collection):
        client.check(collection)
    wanted = COLLECTION_PREFIX + collection + (MERGED if merged else "")
    for entry in listed(request, client):
        if entry["id"] == wanted:
            return entry
    raise NotFound(f"model {echo(str(name))!r} not found", param="model")


OLLAMA_GEMINI_ROUTES = [
    Route("/api/chat", ollama_chat, methods=["POST"]),
    Route("/api/generate", ollama_generate, methods=["POST"]),
    Route("/api/tags", ollama_tags, methods=["GET"]),
    Route("/api/show", ollama_show, methods=["POST"]),
    Route("/api/version", ollama_version, methods=["GET"]),
    Route("/v1beta/models/{model:path}:generateContent", gemini_generate, methods=["POST"]),
    Route("/v1beta/models/{model:path}:streamGenerateContent", gemini_stream, methods=["POST"]),
    Route("/v1beta/models/{model:path}:countTokens", gemini_count_tokens, methods=["POST"]),
    Route("/v1beta/models", gemini_models, methods=["GET"]),
    Route("/v1beta/models/{name:path}", gemini_model, methods=["GET"]),
]


async def openapi_json(request: Request) -> Response:
    return JSONResponse(DESCRIPTION)


async def healthz(request: Request) -> Response:
    if not runtime_of(request).ready:
        return JSONResponse({"status": "starting"}, status_code=503)
    return JSONResponse(runtime_of(request).health.status())


ROUTES = [
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
    Route("/chat/completions", chat_completions, methods=["POST"]),
    Route("/v1/messages", anthropic_messages, methods=["POST"]),
    Route("/messages", anthropic_messages, methods=["POST"]),
    Route("/v1/messages/count_tokens", anthropic_count_tokens, methods=["POST"]),
    Route("/messages/count_tokens", anthropic_count_tokens, methods=["POST"]),
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/responses", create_response, methods=["POST"]),
    Route("/responses", create_response, methods=["POST"]),
    Route("/v1/completions", create_completion, methods=["POST"]),
    Route("/completions", create_completion, methods=["POST"]),
    Route("/models", list_models, methods=["GET"]),
    Route("/v1/models/{model:path}", get_model, methods=["GET"]),
    Route("/models/{model:path}", get_model, methods=["GET"]),
    Route("/bench/verdict", post_verdict, methods=["POST"]),
    Route("/bench/panels", list_panels, methods=["GET"]),
    Route("/bench/panels/{panel}", get_panel, methods=["GET"]),
    Route("/bench/calls/{call}", get_call, methods=["GET"]),
    Route("/bench/conversations/{conversation}", get_conversation, methods=["GET"]),
    Route("/bench/models", bench_models, methods=["GET"]),
    Route("/bench/pending", post_pending, methods=["POST"]),
    Route("/bench/usage", bench_usage, methods=["GET"]),
    Route("/healthz", healthz, methods=["GET"]),
    Route("/openapi.json", openapi_json, methods=["GET"]),
    *OLLAMA_GEMINI_ROUTES,
]

"""The Ollama and Gemini routes: panels through their formats, and the listings and token
counts those clients ask for, each refusing in its own format's error shape."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.asking import COLLECTION_PREFIX, MERGED, collection_named, json_object
from gateway.endpoints.common import read_body, runtime_of
from gateway.endpoints.models import listed
from gateway.endpoints.panels import ask_panel
from gateway.errors import GatewayError, NotFound
from gateway.formats import gemini, gemini_request, ollama, ollama_request
from gateway.keys import Client
from routing.errors import echo

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
        name = ollama_request.model_name(body.get("model", body.get("name")))
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
        # a heavy one off the loop
        body = await runtime.bodies.read(raw, gemini_request.COUNT_CHECK)
        tokens = gemini_request.count_tokens(body, runtime.config.gateway.max_messages)
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

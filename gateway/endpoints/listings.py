"""What Anthropic, Ollama and Gemini clients ask for besides answers: model listings, token
counts (estimates: nothing is seated, called or written) and the version, each refusing in its
own format's error shape."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.endpoints.common import read_body, runtime_of
from gateway.endpoints.models import listed
from gateway.errors import GatewayError, NotFound
from gateway.formats import anthropic, gemini, ollama
from gateway.formats.gemini import read as gemini_request
from gateway.formats.ollama import read as ollama_request
from gateway.replies import JSONResponse
from gateway.request.bounds import json_object
from gateway.request.checks import COLLECTION_PREFIX, MERGED, collection_named
from gateway.request.client import Client
from routing.refusals import did_you_mean, echo


async def ollama_tags(request: Request) -> Response:
    try:
        client = await runtime_of(request).keys.client(request)
    except GatewayError as error:
        return ollama.render_error(error)
    return Response(ollama.tags_body(listed(request, client)), media_type="application/json")


async def ollama_show(request: Request) -> Response:
    try:
        client = await runtime_of(request).keys.client(request)
        body = json_object(await read_body(request, 1_000_000))
        name = ollama_request.model_name(body.get("model", body.get("name")))
        entry = _entry(request, client, name)
    except GatewayError as error:
        return ollama.render_error(error)
    return Response(ollama.show_body(entry), media_type="application/json")


async def ollama_version(request: Request) -> Response:
    return JSONResponse({"version": version("bench-gateway")})


async def gemini_count_tokens(request: Request) -> Response:
    runtime = runtime_of(request)
    try:
        client = await runtime.keys.client(request, google=True)
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
        client = await runtime_of(request).keys.client(request, google=True)
    except GatewayError as error:
        return gemini.render_error(error)
    return JSONResponse({"models": [gemini.model_body(e) for e in listed(request, client)]})


async def gemini_model(request: Request) -> Response:
    try:
        client = await runtime_of(request).keys.client(request, google=True)
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
    entries = listed(request, client)  # (only what this key may use: nothing leaks)
    for entry in entries:
        if entry["id"] == wanted:
            return entry
    hint = did_you_mean(wanted, [entry["id"] for entry in entries])
    raise NotFound(f"model {echo(str(name))!r} not found{hint}", param="model")


async def anthropic_count_tokens(request: Request) -> Response:
    """The gateway's own estimate of the prompt's tokens: nothing is seated, called or written."""
    runtime = runtime_of(request)
    try:
        client = await runtime.keys.client(request)
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        body = await runtime.bodies.read(raw, anthropic.check)  # a heavy one off the loop
        headers = {k.lower(): v for k, v in request.headers.items()}
        collection, tokens = anthropic.count(body, headers, runtime.config)
        client.check(collection)
    except GatewayError as error:
        return anthropic.render_error(error)
    return JSONResponse({"input_tokens": tokens})

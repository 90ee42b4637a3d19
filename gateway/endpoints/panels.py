"""The panel routes: each is read -> seat -> render through its format's module (chat,
Anthropic Messages, Responses, legacy completions), or a route-mode turn when one is asked."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway import route
from gateway.asking import json_object
from gateway.endpoints.common import read_body, runtime_of
from gateway.errors import BadRequest, GatewayError
from gateway.formats import Format, anthropic, chat, completions, responses
from gateway.keys import Client
from gateway.runtime import Runtime
from gateway.seating import start_panel


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
            f"Route mode (bench/{collection}:route) is not available in the "
            f"{_format_name(fmt)} format, which carries no tools; ask it through "
            "/v1/chat/completions, /v1/messages, /v1/responses, /api/chat or Gemini's "
            "generateContent.",
            param="model",
        )
    ask = reader(body, collection)
    with runtime.gatekeeper.admitted(client, collection):  # scope, then the key's rpm
        return await route.start_turn(runtime, ask, client)


def _format_name(fmt: Format) -> str:
    name = getattr(fmt, "__name__", type(fmt).__name__)
    return name.rsplit(".", 1)[-1].removesuffix("Format")


# -- OpenAI Responses, legacy completions, one model (issue 13) ---------------------------------


async def create_response(request: Request) -> Response:
    return await ask_panel(request, responses)


async def create_completion(request: Request) -> Response:
    return await ask_panel(request, completions)

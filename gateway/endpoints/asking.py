"""Every route a client asks models through, in each format, and the one door they share.

`answer(request, fmt)`: the caller's key, the body read once within its limits (its size, and
`gateway.body_timeout_s`), then the worker's admission (503 at capacity: a body still arriving
holds no slot), then the body parsed and checked by the body reader (gateway/request/body.py: a
heavy one off the event loop, whichever path it takes), which says which path: a route-mode
turn (endpoints/turns.py) when the request asks for one, else a panel (endpoints/panels.py),
which the format then renders. A refusal anywhere is rendered in the caller's format.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from gateway.endpoints.common import read_body, runtime_of
from gateway.endpoints.panels import ask_panel
from gateway.endpoints.turns import take_turn
from gateway.errors import GatewayError
from gateway.formats import anthropic, chat, completions, gemini, ollama, responses
from gateway.formats.format import Format
from gateway.route.ask import Door

# -- the routes -------------------------------------------------------------------------------


async def chat_completions(request: Request) -> Response:
    return await answer(request, chat)


async def anthropic_messages(request: Request) -> Response:
    return await answer(request, anthropic)


async def create_response(request: Request) -> Response:
    return await answer(request, responses)


async def create_completion(request: Request) -> Response:
    return await answer(request, completions)


async def ollama_chat(request: Request) -> Response:
    return await answer(request, ollama.CHAT)


async def ollama_generate(request: Request) -> Response:
    return await answer(request, ollama.GENERATE)


async def gemini_generate(request: Request) -> Response:
    model = gemini.model_of(request.path_params["model"])
    return await answer(request, gemini.GeminiFormat(model), path_model=model, google_keys=True)


async def gemini_stream(request: Request) -> Response:
    model = gemini.model_of(request.path_params["model"])
    fmt = gemini.GeminiFormat(model, stream=True, sse=request.query_params.get("alt") == "sse")
    return await answer(request, fmt, path_model=model, google_keys=True)


# -- the door ---------------------------------------------------------------------------------


async def answer(
    request: Request, fmt: Format, *, path_model: str | None = None, google_keys: bool = False
) -> Response:
    """*path_model*: the model a Gemini path names (other formats name it in the body).
    *google_keys*: a Gemini route, where keys also come as `x-goog-api-key` or `?key=`."""
    runtime = runtime_of(request)
    ticket = None
    try:
        client = await runtime.keys.client(request, google=google_keys)
        # The body before the ticket: a body still arriving holds no panel or seat slot, so
        # connections trickling theirs cannot turn honest panels away.
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        ticket = runtime.admission.admit(runtime.config.gateway.max_calls)
        door = Door.of(fmt.check, path_model, runtime.config)
        collection, body = await runtime.bodies.read(raw, door)  # a heavy one off the loop
        headers = {k.lower(): v for k, v in request.headers.items()}
        if collection is not None:
            return await take_turn(runtime, fmt, client, ticket, body, collection, headers)
        run = await ask_panel(runtime, fmt, client, ticket, body, headers)
    except GatewayError as error:
        if ticket is not None:
            ticket.release()
        return fmt.render_error(error)
    except BaseException:
        if ticket is not None:
            ticket.release()
        raise
    return await fmt.render_run(run)

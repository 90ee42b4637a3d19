"""Every route a client asks models through, in each format, and the one door they share.

`answer(request, fmt)`: the caller's key, the worker's admission (before the body is read: a
worker at capacity refuses at once, 503, at the cost of a header check), the body read once
within its limit, then one of two paths, each its own module from here on: a route-mode turn
(endpoints/turns.py) when the request asks for one, else a panel (endpoints/panels.py), which
the format then renders. A refusal anywhere is rendered in the caller's format.
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
from gateway.route.ask import asked

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
        ticket = runtime.admission.admit(runtime.config.gateway.max_calls)
        raw = await read_body(request, runtime.config.gateway.max_body_bytes)
        routed = asked(raw, path_model, runtime.config)
        if routed is not None:
            headers = {k.lower(): v for k, v in request.headers.items()}
            return await take_turn(runtime, fmt, client, ticket, *routed, headers)
        run = await ask_panel(request, runtime, fmt, client, ticket, raw)
    except GatewayError as error:
        if ticket is not None:
            ticket.release()
        return fmt.render_error(error)
    except BaseException:
        if ticket is not None:
            ticket.release()
        raise
    return await fmt.render_run(run)

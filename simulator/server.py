"""A simulated OpenAI-compatible upstream whose behaviour is set per model.

Why it exists: the gateway's hard parts (panel fan-out, timeouts, retries, failover, partial
streams) only show when upstreams misbehave in specific, repeatable ways. Real providers cannot be
made to do that on demand, and mocking litellm would skip the HTTP layer where most failures
happen. So this is a real HTTP server (Starlette under uvicorn) speaking the chat-completions
dialect; tests, the offline demo and benchmarks point litellm's ``openai/<name>`` models at it.

A behaviour is a plain dict (keys in ``BEHAVIOUR_KEYS``). A model's own entry *replaces* the ``"*"``
fallback entirely; the two are not merged. Unknown keys raise ``ValueError`` so that a typo in a
test or spec file fails loudly instead of silently simulating a healthy model.

``fail_times`` limits *every* fault (status, hang, reset, empty, the stream faults), counting the
requests since that model's behaviour was last set, so "fail twice, then recover" needs one line;
``fail_for_s`` does the same by time ("503 for a minute, then healthy").
``fail_tool_turns`` keeps them to the turns that carry a tool's result (an agent failing mid-loop).

Connection-level faults (``reset``, ``stream_cut_after``) must close the TCP connection, which ASGI
cannot express: simulator/connection.py says how it is reached. The endpoint is chat.py; one
exchange's steps are exchange.py, the answer reply.py, a streamed one stream.py.

A request's ``response_format`` is honoured (simulator/shaped.py): asked for JSON, a model
answers its words as JSON that fits the schema.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from simulator.chat import ChatCompletions
from simulator.clock import Clock
from simulator.connection import SERVER_SEND
from simulator.errors import error_body
from simulator.listing import models, set_fault
from simulator.state import (
    BEHAVIOUR_KEYS,
    SimState,
    load_spec,
    validate_behaviour,
)

__all__ = [
    "BEHAVIOUR_KEYS",
    "SimState",
    "create_sim_app",
    "load_spec",
    "serve_simulator",
    "validate_behaviour",
]


class _SimApp(Starlette):
    """Starlette that remembers uvicorn's own ``send`` in the scope; see simulator/connection.py."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[SERVER_SEND] = send
        await super().__call__(scope, receive, send)


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


async def _set_behaviour(request: Request) -> JSONResponse:
    try:
        body = await request.json()
        model = body.pop("model")
        if not isinstance(model, str):
            raise ValueError("'model' must be a string")
        request.app.state.sim.set(model, **body)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return JSONResponse(error_body(400, f"bad behaviour: {exc}"), 400)
    return JSONResponse({"model": model, "behaviour": request.app.state.sim.behaviours[model]})


async def _reset(request: Request) -> JSONResponse:
    request.app.state.sim.reset()
    return JSONResponse({"status": "ok"})


async def _requests(request: Request) -> JSONResponse:
    sim: SimState = request.app.state.sim
    model = request.query_params.get("model")
    return JSONResponse({"requests": sim.log_for(model) if model else sim.requests})


def create_sim_app(spec: dict[str, Any] | None = None, clock: Clock | None = None) -> Starlette:
    """Build a simulator app; its state (behaviours and request log) is ``app.state.sim``.
    *clock* stamps the log and times every pause (the wall clock unless a test gives one)."""
    chat = ChatCompletions()
    app = _SimApp(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models),  # the provider's listing (simulator/listing.py)
            Route("/models", models),
            Route("/healthz", _health),
            Route("/_sim/behaviour", _set_behaviour, methods=["POST"]),
            Route("/_sim/reset", _reset, methods=["POST"]),
            Route("/_sim/requests", _requests),
            Route("/_sim/listing", set_fault, methods=["POST"]),
        ]
    )
    app.state.sim = SimState(spec, clock)
    return app


def serve_simulator(
    host: str = "127.0.0.1", port: int = 8199, spec: dict[str, Any] | None = None
) -> None:
    """Run the simulator until interrupted (the ``bench-gateway simulate`` CLI)."""
    uvicorn.run(create_sim_app(spec), host=host, port=port, log_level="warning", access_log=False)

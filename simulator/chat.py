"""The chat-completions endpoint: reads the request, logs it, picks its behaviour (faults off
once the model has recovered), and answers while watching for the client to leave."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from simulator.errors import error_body
from simulator.exchange import Exchange
from simulator.reply import reply
from simulator.state import _FAULT_KEYS, BEHAVIOUR_KEYS, SimState
from simulator.window import over_window


async def _watch_disconnect(receive: Receive, event: asyncio.Event) -> None:
    """After the body is read, the next ASGI message can only be the client going away."""
    while (await receive())["type"] != "http.disconnect":
        pass
    event.set()


def _after_tool(payload: dict[str, Any]) -> bool:
    """The request's last message is a tool's result: a later turn of an agent's tool loop."""
    messages = payload.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    return isinstance(last, dict) and last.get("role") == "tool"


class ChatCompletions:
    """Raw ASGI endpoint (a class, so Starlette does not wrap it as request/response): faults
    such as a dropped connection or a half-sent stream need control below Response objects."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sim: SimState = scope["app"].state.sim
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body, more = body + message.get("body", b""), message.get("more_body", False)
        try:
            payload = json.loads(body or b"null")
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or not isinstance(payload.get("model"), str):
            err = error_body(400, "body must be a JSON object with a string 'model'")
            return await JSONResponse(err, 400)(scope, receive, send)
        agent = dict(scope.get("headers") or []).get(b"user-agent", b"").decode("latin-1")
        entry, attempt = sim.begin(payload["model"], payload, agent)
        b = sim.behaviour_for(payload["model"])
        if sim.recovered(payload["model"], b, attempt) or (
            b["fail_tool_turns"] and not _after_tool(payload)
        ):  # no faults any more
            b.update({k: BEHAVIOUR_KEYS[k][1] for k in _FAULT_KEYS})
        if refusal := over_window(payload, b["context_window"]):
            b.update(status=400, error_message=refusal)
        gone = asyncio.Event()
        watcher = asyncio.create_task(_watch_disconnect(receive, gone))
        try:
            await reply(Exchange(scope, send, entry, b, gone, sim.clock), payload)
        finally:  # also on cancellation (server shutdown): the log must still say when it ended
            watcher.cancel()
            if entry["ended"] is None:
                entry["ended"] = sim.clock.now()
                entry["outcome"] = entry["outcome"] or "cancelled"

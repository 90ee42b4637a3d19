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
cannot express. Under uvicorn we reach the connection's transport through the server's own ``send``
callable (a bound method of uvicorn's request cycle); under any other server we fall back to
raising, which still breaks the response, just less precisely.

A request's ``response_format`` is honoured (simulator/shaped.py): asked for JSON, a model
answers its words as JSON that fits the schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import re
import socket
import struct
import uuid
from collections.abc import Iterable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from routing.text import content_text
from simulator import flood
from simulator.clock import Clock
from simulator.shaped import shaped
from simulator.state import (
    _FAULT_KEYS,
    BEHAVIOUR_KEYS,
    Behaviour,
    LoggedRequest,
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

_SERVER_SEND = "bench_gateway.sim.server_send"  # scope key holding uvicorn's unwrapped send


def _error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = {
        400: ("invalid_request_error", None),
        401: ("invalid_request_error", "invalid_api_key"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
    }.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    if "context length" in message:
        code = "context_length_exceeded"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


async def _watch_disconnect(receive: Receive, event: asyncio.Event) -> None:
    """After the body is read, the next ASGI message can only be the client going away."""
    while (await receive())["type"] != "http.disconnect":
        pass
    event.set()


class _Exchange:
    """One request/response; the methods are the steps a behaviour can stop at."""

    def __init__(
        self,
        scope: Scope,
        send: Send,
        entry: LoggedRequest,
        b: Behaviour,
        gone: asyncio.Event,
        clock: Clock,
    ) -> None:
        self.scope, self.send, self.entry, self.b, self.gone = scope, send, entry, b, gone
        self.clock = clock
        self.model = entry["model"]

    def finish(self, outcome: str) -> None:
        """Record the end. Called just *before* the last bytes (or the close) go out, so a client
        that has seen the end of its response always finds ``ended`` set in the log."""
        self.entry["outcome"], self.entry["ended"] = outcome, self.clock.now()

    def stated_headers(self) -> list[tuple[bytes, bytes]]:
        """The behaviour's own response headers (`headers`), as a provider states its limits."""
        stated = self.b["headers"] or {}
        return [(str(k).lower().encode(), str(v).encode()) for k, v in stated.items()]

    async def pause(self, seconds: float) -> bool:
        """Sleep, but return False at once if the client leaves, so the log shows when it did."""
        await self.clock.wait(self.gone, seconds)
        if self.gone.is_set():
            self.finish("client_disconnected")
            return False
        return True

    async def wait_for_client_to_leave(self, outcome: str) -> None:
        await self.gone.wait()
        self.finish(outcome)

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.entry["status"] = status
        await self.send({"type": "http.response.start", "status": status, "headers": headers})

    async def write(self, data: bytes, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": more})

    async def send_json(
        self,
        status: int,
        body: dict[str, Any],
        headers: Iterable[tuple[bytes, bytes]] = (),
        outcome: str = "ok",
    ) -> None:
        await self.start(status, [(b"content-type", b"application/json"), *headers])
        self.finish(outcome)
        await self.write(json.dumps(body).encode(), more=False)

    async def drop(self, *, abrupt: bool, outcome: str) -> None:
        """Close the TCP connection: RST if *abrupt* (no response at all), else a plain FIN."""
        transport = getattr(
            getattr(self.scope.get(_SERVER_SEND), "__self__", None), "transport", None
        )
        self.finish(outcome)
        if transport is None or not callable(getattr(transport, "abort", None)):  # asyncio, uvloop
            raise RuntimeError(f"simulated {outcome}: no uvicorn transport, raising instead")
        if abrupt:  # SO_LINGER 0 makes close() send RST: the client sees ECONNRESET
            with contextlib.suppress(OSError, AttributeError):
                transport.get_extra_info("socket").setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            transport.abort()
        else:
            transport.close()  # flushes what was written, then FIN mid chunked body
        with contextlib.suppress(TimeoutError):  # let uvicorn notice, so it logs no error
            await asyncio.wait_for(self.gone.wait(), 5)

    async def replay(self, script: dict[str, Any]) -> None:
        """The scripted reply, part by part (see the `script` behaviour key)."""
        stated = script.get("headers") or {}
        headers = [(str(k).lower().encode(), str(v).encode()) for k, v in stated.items()]
        kind = script.get("content_type", "text/event-stream").encode()
        await self.start(script.get("status", 200), [(b"content-type", kind), *headers])
        for part in script.get("parts", []):
            await self.write(part.encode("utf-8", "surrogateescape"))
        if script.get("cut"):
            return await self.drop(abrupt=False, outcome="cut")
        self.finish("scripted")
        await self.write(b"", more=False)

    async def run(self, payload: dict[str, Any]) -> None:
        b = self.b
        if not await self.pause(b["latency_s"]):
            return
        if b["script"] is not None:
            return await self.replay(b["script"])
        if b["flood"] is not None:
            return await flood.reply(self, b["flood"])
        if b["reset"]:
            return await self.drop(abrupt=True, outcome="reset")
        if b["hang"]:
            return await self.wait_for_client_to_leave("hung")
        if b["status"] != 200:
            status = b["status"]
            phrase = {s.value: s.phrase for s in http.HTTPStatus}.get(status, "Error")
            message = b["error_message"] or f"Simulated {status} {phrase} from {self.model}."
            headers = [(b"retry-after", b["retry_after"]), (b"retry-after-ms", b["retry_after_ms"])]
            headers = [(name, str(value).encode()) for name, value in headers if value is not None]
            headers += self.stated_headers()
            return await self.send_json(status, _error_body(status, message), headers, "error")
        messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
        if b["refuses_prefill"] and messages and messages[-1].get("role") == "assistant":
            message = f"{self.model} does not support assistant message prefill."
            body = _error_body(400, b["error_message"] or message)
            return await self.send_json(400, body, self.stated_headers(), "error")
        last_user = next(
            (content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"),
            "",
        )
        echo = f" You said: {last_user[:80]}" if last_user else ""  # tells seats apart in tests
        default = f"Simulated answer from {self.model}.{echo}"
        answer = "" if b["empty"] else default if b["answer"] is None else b["answer"]
        if b["answer_bytes"] is not None:  # streamed, its pieces are made in `stream`
            answer = "" if payload.get("stream") else _filler(b["answer_bytes"])
        elif not b["repeats_prefix"]:
            answer = _continued(answer, messages)
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":  # the tool's result came back: say what it said
            answer = f"The tool said: {content_text(last.get('content'))[:200]}"
        answer = shaped(answer, payload.get("response_format"))  # JSON when JSON is asked for
        calls = b["tool_call"] if payload.get("tools") and last.get("role") != "tool" else None
        prompt_tokens = len("".join(content_text(m.get("content")) for m in messages)) // 4
        said = len(answer.split()) if b["answer_bytes"] is None else b["answer_bytes"] // 5
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": said,
            "total_tokens": prompt_tokens + said,
        }
        base = {
            "id": f"chatcmpl-sim-{uuid.uuid4().hex[:12]}",
            "created": int(self.clock.now()),
            "model": self.model,
        }
        tool_calls = None
        if calls is not None:
            tool_calls = [
                {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {
                        "name": call.get("name", "tool"),
                        "arguments": json.dumps(call.get("arguments") or {}),
                    },
                }
                for call in (calls if isinstance(calls, list) else [calls])
            ]
        if not payload.get("stream"):
            if not await self.pause(b["think_s"] or 0):
                return
            reply: dict[str, Any] = {"role": "assistant", "content": answer}
            if tool_calls:
                reply = {"role": "assistant", "content": None, "tool_calls": tool_calls}
            if b["reasoning"]:
                reply["reasoning_content"] = b["reasoning"]
            finish = "tool_calls" if tool_calls else "stop"
            return await self.send_json(
                200,
                {
                    **base,
                    "object": "chat.completion",
                    **({"usage": usage} if b["usage"] else {}),
                    "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
                },
                self.stated_headers(),
            )
        include_usage = b["usage"] and bool(
            (payload.get("stream_options") or {}).get("include_usage")
        )
        await self.stream(answer, base, usage if include_usage else None, tool_calls)

    async def stream(
        self,
        answer: str,
        base: dict[str, Any],
        usage: dict[str, int] | None,
        tool_calls: list[dict[str, Any]] | None = None,
    ) -> None:
        """SSE chunks: role, content in 3-word groups (or `chunk_chars` characters each; or a
        tool call's deltas: its id and name, then its arguments in two halves), finish, optional
        usage, ``[DONE]``."""
        b = self.b

        async def event(
            delta: dict[str, Any] | None, finish: str | None = None, **extra: Any
        ) -> None:
            choices = (
                [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
            )
            chunk = {**base, "object": "chat.completion.chunk", "choices": choices, **extra}
            await self.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

        if b["answer_bytes"] is not None:  # one string sent again and again, never built whole
            size = b["piece_bytes"]
            whole, rest = divmod(b["answer_bytes"], size)
            piece = _filler(size)
            pieces = [piece] * whole + ([piece[:rest]] if rest else [])
        elif b["chunk_chars"]:
            size = b["chunk_chars"]
            pieces = [answer[i : i + size] for i in range(0, len(answer), size)]
        else:
            words = re.findall(r"\s*\S+\s*", answer) or ([answer] if answer else [])
            pieces = ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]
        await self.start(
            200,
            [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache"),
                *self.stated_headers(),
            ],
        )
        await event({"role": "assistant", "content": ""})
        if (b["reasoning"] or b["think_s"]) and not await self._think(event):
            return
        if tool_calls:
            if not await self._stream_calls(event, tool_calls):
                return
            pieces = []
        for i in range(len(pieces) + 1):
            if b["stream_cut_after"] == i:
                return await self.drop(abrupt=False, outcome="cut")
            if b["stream_stall_after"] == i:
                return await self.wait_for_client_to_leave("stalled")
            if b["malformed_chunk"] and i == min(1, len(pieces)):
                await self.write(b"data: {this chunk is not json\n\n")
            if i == len(pieces):
                break
            if not await self.pause(b["chunk_delay_s"] if i else 0):
                return
            if b["error_after"] == i:
                self.finish("error_after")
                error = _error_body(500, f"Simulated failure mid-stream from {self.model}.")
                await self.write(b"data: " + json.dumps(error).encode() + b"\n\n", more=False)
                return
            await event({"content": pieces[i]})
        await event({}, "tool_calls" if tool_calls else "stop")
        if usage is not None:
            await event(None, usage=usage)
        self.finish("no_done" if b["no_done"] else "ok")
        await self.write(b"" if b["no_done"] else b"data: [DONE]\n\n", more=False)

    async def _think(self, event: Any) -> bool:
        """The reasoning as `reasoning_content` deltas, spread over `think_s` (or at once);
        False if the client left meanwhile."""
        b = self.b
        words = re.findall(r"\s*\S+\s*", b["reasoning"] or "")
        parts = ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]
        step = (b["think_s"] or 0) / (len(parts) + 1)
        for part in parts:
            if not await self.pause(step):
                return False
            await event({"reasoning_content": part})
        return await self.pause(step)

    async def _stream_calls(self, event: Any, tool_calls: list[dict[str, Any]]) -> bool:
        """Each call's id and name, then its arguments in two halves. `stream_cut_after` here
        counts these deltas: a cut inside a call's arguments. False if the stream ended."""
        sent = 0

        async def send(delta: dict[str, Any]) -> bool:
            nonlocal sent
            await event({"tool_calls": [delta]})
            sent += 1
            if self.b["stream_cut_after"] == sent:
                await self.drop(abrupt=False, outcome="cut")
                return False
            return True

        for index, call in enumerate(tool_calls):
            function = call["function"]
            head = {"index": index, "id": call["id"], "type": "function"}
            head["function"] = {"name": function["name"], "arguments": ""}
            if not await send(head):
                return False
            arguments = function["arguments"]
            half = len(arguments) // 2
            for part in (arguments[:half], arguments[half:]):
                if not await self.pause(self.b["chunk_delay_s"]):
                    return False
                if not await send({"index": index, "function": {"arguments": part}}):
                    return False
        return True


def _continued(answer: str, messages: list[dict[str, Any]]) -> str:
    """What follows the text of the last assistant message, when the answer starts with it (a
    model given its own earlier text, as a prefill or with "continue", goes on from there)."""
    said = [content_text(m.get("content")) for m in messages if m.get("role") == "assistant"]
    prior = said[-1] if said else ""
    if prior and len(answer) > len(prior) and answer.startswith(prior):
        return answer[len(prior) :]
    return answer


def _filler(size: int) -> str:
    """*size* bytes of text, for an answer too large to pass on."""
    return ("All work and no play. " * (size // 22 + 1))[:size]


def _after_tool(payload: dict[str, Any]) -> bool:
    """The request's last message is a tool's result: a later turn of an agent's tool loop."""
    messages = payload.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    return isinstance(last, dict) and last.get("role") == "tool"


class _ChatCompletions:
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
            err = _error_body(400, "body must be a JSON object with a string 'model'")
            return await JSONResponse(err, 400)(scope, receive, send)
        agent = dict(scope.get("headers") or []).get(b"user-agent", b"").decode("latin-1")
        entry, attempt = sim.begin(payload["model"], payload, agent)
        b = sim.behaviour_for(payload["model"])
        if sim.recovered(payload["model"], b, attempt) or (
            b["fail_tool_turns"] and not _after_tool(payload)
        ):  # no faults any more
            b.update({k: BEHAVIOUR_KEYS[k][1] for k in _FAULT_KEYS})
        gone = asyncio.Event()
        watcher = asyncio.create_task(_watch_disconnect(receive, gone))
        try:
            await _Exchange(scope, send, entry, b, gone, sim.clock).run(payload)
        finally:  # also on cancellation (server shutdown): the log must still say when it ended
            watcher.cancel()
            if entry["ended"] is None:
                entry["ended"] = sim.clock.now()
                entry["outcome"] = entry["outcome"] or "cancelled"


class _SimApp(Starlette):
    """Starlette that remembers uvicorn's own ``send`` in the scope; see the module docstring."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[_SERVER_SEND] = send
        await super().__call__(scope, receive, send)


async def _models(request: Request) -> JSONResponse:
    names = [m for m in request.app.state.sim.behaviours if m != "*"]
    return JSONResponse(
        {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "bench-gateway-sim"}
                for m in names
            ],
        }
    )


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
        return JSONResponse(_error_body(400, f"bad behaviour: {exc}"), 400)
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
    chat = _ChatCompletions()
    app = _SimApp(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", _models),
            Route("/models", _models),
            Route("/healthz", _health),
            Route("/_sim/behaviour", _set_behaviour, methods=["POST"]),
            Route("/_sim/reset", _reset, methods=["POST"]),
            Route("/_sim/requests", _requests),
        ]
    )
    app.state.sim = SimState(spec, clock)
    return app


def serve_simulator(
    host: str = "127.0.0.1", port: int = 8199, spec: dict[str, Any] | None = None
) -> None:
    """Run the simulator until interrupted (the ``bench-gateway simulate`` CLI)."""
    uvicorn.run(create_sim_app(spec), host=host, port=port, log_level="warning", access_log=False)

"""Ollama's two panel formats, `/api/chat` and `/api/generate`, as `Format`s (`CHAT`,
`GENERATE`): read.py checks, render.py shapes the NDJSON, route.py takes an agent's turn."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ollama import ChatResponse, GenerateResponse, Message
from starlette.responses import Response, StreamingResponse

from gateway.config.schema import GatewaySettings
from gateway.config.settings import Config
from gateway.errors import GatewayError
from gateway.formats.ollama import read as ollama_request
from gateway.formats.ollama.render import NDJSON, iso, ndjson, render_error
from gateway.panel import reply
from gateway.panel.ask import Ask, nominees_of, reply_merged, shape_asked
from gateway.panel.run import KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.request.checks import collection_named

if TYPE_CHECKING:  # route mode brings litellm, which the body reader's child must not import
    from gateway.route.ask import RouteAsk
    from gateway.route.turn import RouteTurn


class OllamaFormat:
    """`/api/chat` (kind "chat") or `/api/generate` (kind "generate"): the two halves."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
        """A parsed body, checked and turned into the fields a panel reads (ollama_request.py).
        Pure, so it may run in the body reader's child process (gateway/request/body.py)."""
        return ollama_request.checked(self.kind, body, settings)

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
        """A checked body (and the X-Panel-* headers, lower-cased) as an Ask."""
        model = body["model"]
        collection, merged_by_name = collection_named(model)
        return Ask.of(
            requested_model=model,
            collection=collection,
            shape=shape_asked(headers, collection, config),
            nominees=nominees_of(list(body["with"]), headers.get("x-panel-with")),
            messages=body["messages"],
            sampling=body["sampling"],
            stream=body["stream"],
            merged=merged_by_name or reply_merged(body["reply"], collection, config),
            hints=body["hints"],
        )

    async def render_run(self, run: PanelRun) -> Response:
        if run.ask.stream:
            headers = dict(run.headers)
            return StreamingResponse(self.stream(run), media_type=NDJSON, headers=headers)
        await run.run()
        error = run.failure()
        if error is not None:
            return self.render_error(error)
        done = run.completion()
        headers = dict(run.headers)
        body = self._line(run, done.text, done=True, usage=done.usage, bench=done.bench)
        return Response(body, media_type="application/json", headers=headers)

    def render_error(self, error: GatewayError) -> Response:
        return render_error(error)

    # Route mode brings litellm, which the body reader's child (handed `check`) must not
    # import: route.py is imported when first used.
    def read_route(
        self, body: dict[str, Any], headers: dict[str, str], collection: str
    ) -> RouteAsk:
        from gateway.formats.ollama import route as route_ollama

        return route_ollama.read_route(body, headers, collection, self.kind)

    async def render_route(self, turn: RouteTurn) -> Response:
        from gateway.formats.ollama import route as route_ollama

        return await route_ollama.render_route(turn)

    async def stream(self, run: PanelRun) -> AsyncIterator[bytes]:
        merged = run.ask.merged
        if not merged:
            yield self._line(run, reply.header_line(run.facts) + "\n")
        async for event in run.events():
            if isinstance(event, KeepAlive):
                yield self._line(run, "")
            elif isinstance(event, SeatFinished):
                if not merged:
                    yield self._line(run, reply.section(event.seat) + "\n")
            elif isinstance(event, PanelEnded):
                if event.completion is None:
                    assert event.error is not None
                    yield ndjson({"error": event.error.message})
                    return
                done = event.completion
                if merged:
                    yield self._line(run, done.text)
                yield self._line(run, "", done=True, usage=done.usage, bench=done.bench)

    def _line(
        self,
        run: PanelRun,
        text: str,
        *,
        done: bool = False,
        usage: dict[str, int] | None = None,
        bench: dict[str, Any] | None = None,
    ) -> bytes:
        """One reply object in the `ollama` package's type: a piece of text, or the last one."""
        fields: dict[str, Any] = {
            "model": run.ask.requested_model,
            "created_at": iso(run.facts.created),
            "done": done,
        }
        if done:
            assert usage is not None
            elapsed = max(0, int((time.time() - run.facts.created) * 1e9))
            fields.update(
                done_reason="stop",
                total_duration=elapsed,
                load_duration=0,
                prompt_eval_count=usage["prompt_tokens"],
                eval_count=usage["completion_tokens"],
            )
        if self.kind == "chat":
            typed: ChatResponse | GenerateResponse = ChatResponse(
                message=Message(role="assistant", content=text), **fields
            )
        else:
            typed = GenerateResponse(response=text, **fields)
        if bench is None:
            return typed.model_dump_json(exclude_none=True).encode() + b"\n"
        return ndjson({**typed.model_dump(mode="json", exclude_none=True), "bench": bench})


CHAT = OllamaFormat("chat")


GENERATE = OllamaFormat("generate")

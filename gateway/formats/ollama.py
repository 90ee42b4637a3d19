"""Ollama's API (`/api/chat`, `/api/generate`, `/api/tags`, `/api/show`, `/api/version`), so
Open WebUI and every Ollama client can ask a panel.

litellm has no inbound Ollama translator, and the format is small. It is two modules, one per
half, so that neither passes ~250 lines: ollama_request.py is the read half (a body checked and
turned into OpenAI chat messages and sampling, refusing what cannot be honoured; pure, for the
body reader's child process); this module is the rest, the `Format` itself and everything the
gateway sends back: replies, the stream, errors, and the collections listed as models.
Replies are built with the `ollama` package's own types, so they are the shapes its client
parses. Streams are NDJSON (Ollama streams unless `"stream": false`): a line for the header,
one per seat section in finish order, then the `done` line carrying `bench`. Keep-alives are
lines with empty content (an Ollama client parses every line as JSON). Tools go to route mode
(route_ollama.py).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ollama import ChatResponse, GenerateResponse, ListResponse, Message, ShowResponse
from ollama._types import ModelDetails  # (not re-exported at the top level)
from starlette.responses import JSONResponse, Response, StreamingResponse

from gateway import reply
from gateway.asking import Ask, collection_named, nominees_of, reply_merged, shape_asked
from gateway.config_schema import GatewaySettings
from gateway.errors import GatewayError
from gateway.formats import ollama_request
from gateway.panel import KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.settings import Config

if TYPE_CHECKING:  # route mode brings litellm, which the body reader's child must not import
    from gateway.route import RouteAsk, RouteTurn

NDJSON = "application/x-ndjson"


# -- read ---------------------------------------------------------------------------------------


class OllamaFormat:
    """`/api/chat` (kind "chat") or `/api/generate` (kind "generate"): the two halves."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
        """A parsed body, checked and turned into the fields a panel reads (ollama_request.py).
        Pure, so it may run in the body reader's child process (gateway/bodies.py)."""
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

    # Route mode (`bench/<c>:route`) lives in route_ollama, which reads this module's helpers;
    # so it is imported when first used, not here.
    def read_route(self, body: dict[str, Any], collection: str) -> RouteAsk:
        from gateway.formats import route_ollama

        return route_ollama.read_route(body, collection, self.kind)

    async def render_route(self, turn: RouteTurn) -> Response:
        from gateway.formats import route_ollama

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
                    yield _ndjson({"error": event.error.message})
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
        return _ndjson({**typed.model_dump(mode="json", exclude_none=True), "bench": bench})


CHAT = OllamaFormat("chat")
GENERATE = OllamaFormat("generate")


# -- render -------------------------------------------------------------------------------------


def render_error(error: GatewayError) -> Response:
    """Ollama's `{"error": "..."}`, with the gateway's status; a failed panel keeps `bench`."""
    return JSONResponse(
        {"error": error.message, **error.extra}, status_code=error.status, headers=error.headers
    )


def tags_body(entries: list[dict[str, Any]]) -> bytes:
    """`/api/tags`: the collections /v1/models lists, as Ollama lists its models."""
    models = [ListResponse.Model(**_listed(entry)) for entry in entries]
    listing = ListResponse(models=models).model_dump(mode="json", exclude_none=True)
    for model, entry in zip(listing["models"], entries, strict=True):
        model["name"] = entry["id"]  # Ollama's own listing names each model twice
    return json.dumps(listing).encode()


def show_body(entry: dict[str, Any]) -> bytes:
    """`/api/show`: one collection's details."""
    info = {
        "general.architecture": "bench",
        "general.description": entry["description"],
        "bench.members": entry["members"],
        "bench.explorers": entry["explorers"],
        "bench.shape": entry["shape"],
        "bench.reply": entry["reply"],
        "bench.tags": entry["tags"],
    }
    shown = ShowResponse(
        modified_at=_EPOCH,
        details=_details(entry),
        model_info=info,
        capabilities=["completion"],
    )
    return shown.model_dump_json(by_alias=True, exclude_none=True).encode()


def _listed(entry: dict[str, Any]) -> dict[str, Any]:
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()
    return {
        "model": entry["id"],
        "modified_at": _EPOCH,
        "digest": digest,
        "size": 0,
        "details": _details(entry),
    }


def _details(entry: dict[str, Any]) -> ModelDetails:
    return ModelDetails(format="bench", family="bench", families=list(entry["members"]) or None)


_EPOCH = datetime.fromtimestamp(0, UTC)


def iso(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat().replace("+00:00", "Z")


def _ndjson(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode() + b"\n"

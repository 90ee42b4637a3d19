"""Ollama's API (`/api/chat`, `/api/generate`, `/api/tags`, `/api/show`, `/api/version`), so
Open WebUI and every Ollama client can ask a panel.

litellm has no inbound Ollama translator, and the format is small: the reader here turns a
request into OpenAI chat messages and sampling and then runs the checks every format shares
(gateway/asking.py); replies are built with the `ollama` package's own types, so they are the
shapes its client parses. Streams are NDJSON (Ollama streams unless `"stream": false`): a line
for the header, one per seat section in finish order, then the `done` line carrying `bench`.
Keep-alives are lines with empty content (an Ollama client parses every line as JSON).

Nothing is dropped silently. Options that change an answer and cannot be passed on to an
OpenAI-shaped seat (top_k, repeat_penalty, mirostat, ...) are refused; options that only tune a
local Ollama runtime (num_ctx, num_gpu, num_thread, ...) and `keep_alive` mean nothing for a
remote model and are accepted without effect. Tools on a panel, templates, raw prompts, suffixes
and `context` are refused with a 400 that says why; tools go to route mode (route_ollama.py).
"""

from __future__ import annotations

import base64
import binascii
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
from gateway.asking import (
    Ask,
    chat_messages,
    collection_named,
    nominees_of,
    reply_asked,
    reply_merged,
    sampling_of,
    shape_asked,
)
from gateway.bodies import bounded
from gateway.config_schema import GatewaySettings
from gateway.errors import BadRequest, GatewayError
from gateway.panel import KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.settings import Config

if TYPE_CHECKING:  # route mode brings litellm, which the body reader's child must not import
    from gateway.route import RouteAsk, RouteTurn

NDJSON = "application/x-ndjson"
LATEST = ":latest"
ROUTE_HINT = "tools are not supported on a panel; use the collection's `:route` model for tools"
# Ollama option -> the OpenAI sampling field it is passed on as.
_OPTIONS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "num_predict": "max_tokens",
    "stop": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
# Options that tune a local Ollama runtime, not the answer: nothing to pass on to a remote model.
_RUNTIME_OPTIONS = frozenset(
    {
        "num_ctx", "num_batch", "num_gpu", "main_gpu", "low_vram", "f16_kv", "logits_all",
        "vocab_only", "use_mmap", "use_mlock", "num_thread", "numa", "num_keep",
    }
)  # fmt: skip
_COMMON = frozenset(
    {"model", "format", "options", "stream", "keep_alive", "think", "with", "bench"}
)
_CHAT_FIELDS = _COMMON | {"messages", "tools", "logprobs", "top_logprobs"}
_GENERATE_FIELDS = _COMMON | {
    "prompt", "suffix", "images", "system", "template", "context", "raw", "logprobs",
    "top_logprobs",
}  # fmt: skip
_MESSAGE_FIELDS = frozenset({"role", "content", "images", "thinking", "tool_calls", "tool_name"})
_IMAGE_TYPES = (
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"RIFF", "image/webp"),
)


# -- read ---------------------------------------------------------------------------------------


class OllamaFormat:
    """`/api/chat` (kind "chat") or `/api/generate` (kind "generate"): the two halves."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
        """A parsed body, checked and turned into the fields a panel reads: OpenAI chat
        messages and sampling, through the checks chat's get. Pure, so it may run in the body
        reader's child process (gateway/bodies.py), images' base64 decoded there too."""
        bounded(body, settings, listed="messages")
        known = _CHAT_FIELDS if self.kind == "chat" else _GENERATE_FIELDS
        for field in body:
            if field not in known:
                raise BadRequest(f"`{field}` is not a field the gateway knows on /api/{self.kind}.")
        model = model_name(body.get("model"))
        collection_named(model)
        if self.kind == "chat":
            if body.get("tools"):
                raise BadRequest(f"`tools`: {ROUTE_HINT}.", param="tools")
            messages = _chat_messages(body.get("messages"))
        else:
            messages = _generate_messages(body)
        _refuse_thinking_and_logprobs(body)
        sampling = sampling_of(sampling_fields(body.get("options"), body.get("format")))
        stream = body.get("stream", True)
        if not isinstance(stream, bool):
            raise BadRequest("`stream` must be true or false.", param="stream")
        keep_alive = body.get("keep_alive")  # a local runtime's setting: nothing to keep alive
        if keep_alive is not None and not isinstance(keep_alive, str | int | float):
            raise BadRequest("`keep_alive` must be a duration or a number.", param="keep_alive")
        return {
            "model": model,
            "messages": chat_messages(messages, settings.max_messages),
            "sampling": sampling,
            "stream": stream,
            "with": nominees_of(body.get("with"), None),
            "reply": reply_asked(body.get("bench")),
        }

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


def model_name(model: Any) -> Any:
    """The model as asked, without the `:latest` tag Ollama clients may add to a listed name
    (anything but a string comes back as it was, for `collection_named` to refuse)."""
    if isinstance(model, str) and model.endswith(LATEST):
        return model.removesuffix(LATEST)
    return model


def _chat_messages(messages: Any) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    converted = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        for field in message:
            if field not in _MESSAGE_FIELDS:
                raise BadRequest(f"`{where}.{field}` is not a message field.", param=where)
        if message.get("role") == "tool" or message.get("tool_calls") or message.get("tool_name"):
            raise BadRequest(f"`{where}` is a tool call or result: {ROUTE_HINT}.", param=where)
        # An earlier turn's `thinking` is left out, as Ollama's own templates leave it out.
        content = message.get("content", "")
        converted.append(
            {
                "role": message.get("role"),
                "content": with_images(content, message.get("images"), f"{where}.images"),
            }
        )
    return converted


def _generate_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    for field, why in (
        ("suffix", "fill-in-the-middle cannot be asked of a panel's chat models"),
        ("template", "a prompt template cannot be applied to a panel's chat models"),
        ("context", "a stored conversation context cannot be continued; send the messages"),
    ):
        if body.get(field):
            raise BadRequest(f"`{field}`: {why}.", param=field)
    if body.get("raw") is True:
        raise BadRequest("`raw`: a raw prompt cannot be sent to chat models.", param="raw")
    prompt = body.get("prompt", "")
    if not isinstance(prompt, str):
        raise BadRequest("`prompt` must be a string.", param="prompt")
    if not prompt.strip() and not body.get("images"):
        raise BadRequest("`prompt` is empty: there is nothing to ask the panel.", param="prompt")
    messages = []
    system = body.get("system")
    if system is not None:
        if not isinstance(system, str):
            raise BadRequest("`system` must be a string.", param="system")
        if system:
            messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": with_images(prompt, body.get("images"), "images")})
    return messages


def with_images(text: Any, images: Any, where: str) -> Any:
    """The content as OpenAI chat has it: the text, or text and image parts (data URLs)."""
    if not images:
        return text
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        raise BadRequest(f"`{where}` must be a list of base64 strings.", param=where)
    if not isinstance(text, str):
        raise BadRequest(f"`{where}`: the message's content must be a string.", param=where)
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for i, image in enumerate(images):
        parts.append({"type": "image_url", "image_url": {"url": _data_url(image, f"{where}[{i}]")}})
    return parts


def _data_url(image: str, where: str) -> str:
    image = image.strip()
    try:
        head = base64.b64decode(image[:16], validate=True) if image else b""
        base64.b64decode(image, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"`{where}` is not base64.", param=where) from None
    if not head:
        raise BadRequest(f"`{where}` is empty.", param=where)
    mime = next((m for magic, m in _IMAGE_TYPES if head.startswith(magic)), "image/png")
    return f"data:{mime};base64,{image}"


def _refuse_thinking_and_logprobs(body: dict[str, Any]) -> None:
    if body.get("think") not in (None, False):
        raise BadRequest("`think`: a panel's reply carries no separate thinking.", param="think")
    for field in ("logprobs", "top_logprobs"):
        if body.get(field):
            raise BadRequest(f"`{field}`: a panel's reply carries no log probabilities.")


def sampling_fields(options: Any, fmt: Any) -> dict[str, Any]:
    """Ollama's `options` and `format` as OpenAI sampling fields, for the shared checks."""
    fields: dict[str, Any] = {}
    if options is not None:
        if not isinstance(options, dict):
            raise BadRequest("`options` must be an object.", param="options")
        for name, value in options.items():
            if name in _RUNTIME_OPTIONS or value is None:
                continue
            if name not in _OPTIONS:
                raise BadRequest(
                    f"`options.{name}` cannot be passed on to a panel's seats; the options it "
                    f"takes: {', '.join(sorted(_OPTIONS))}.",
                    param=f"options.{name}",
                )
            if name == "num_predict" and isinstance(value, int) and value in (-1, -2):
                continue  # no cap: what a seat does anyway
            fields[_OPTIONS[name]] = value
        if "max_tokens" in fields and (
            not isinstance(fields["max_tokens"], int) or fields["max_tokens"] < 1
        ):
            raise BadRequest(
                "`options.num_predict` must be a positive integer, or -1 for no limit.",
                param="options.num_predict",
            )
    if fmt == "json":
        fields["response_format"] = {"type": "json_object"}
    elif isinstance(fmt, dict):
        schema = {"name": "response", "schema": fmt}
        fields["response_format"] = {"type": "json_schema", "json_schema": schema}
    elif fmt not in (None, ""):
        raise BadRequest('`format` must be "json" or a JSON schema.', param="format")
    return fields


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

"""The read half of Ollama's format (ollama.py): a body of `/api/chat` or `/api/generate` checked
and turned into what a panel reads, OpenAI chat messages and sampling, then the checks every
format shares (gateway/panel/ask.py, gateway/request/checks.py). Kept apart from the replies
because it is pure, and must stay so: it runs in the body reader's child process
(gateway/request/body.py), images' base64 decoded there too. Route mode (route_ollama.py)
reads options and images with the same helpers, and `/api/show` reads a model name with
`model_name`.

Nothing is dropped silently. Options that change an answer and cannot be passed on to an
OpenAI-shaped seat (top_k, repeat_penalty, mirostat, ...) are refused; options that only tune a
local Ollama runtime (num_ctx, num_gpu, num_thread, ...) and `keep_alive` mean nothing for a
remote model and are accepted without effect. Templates, raw prompts, suffixes and `context` are
refused with a 400 that says why. A panel answers in prose: tools offered to it are named as
dropped (`X-Bench-Dropped: tools`) and earlier tool calls and results reach the seats as text;
route mode (`bench/<c>:route`) passes them through.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

from gateway.config.schema import GatewaySettings
from gateway.errors import BadRequest
from gateway.panel.ask import chat_messages, nominees_of, reply_asked
from gateway.request.bounds import bounded, whole
from gateway.request.checks import collection_named, sampling_of
from gateway.request.hints import Hints

LATEST = ":latest"
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


def checked(kind: str, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A parsed body of /api/*kind* ("chat" or "generate"), checked and turned into the fields
    a panel reads: OpenAI chat messages and sampling, through the checks chat's get."""
    bounded(body, settings, listed="messages")
    known = _CHAT_FIELDS if kind == "chat" else _GENERATE_FIELDS
    for field in body:
        if field not in known:
            raise BadRequest(f"`{field}` is not a field the gateway knows on /api/{kind}.")
    model = model_name(body.get("model"))
    collection_named(model)
    found = Hints()
    if kind == "chat":
        if body.get("tools"):  # a panel answers in prose
            found = found.drop("tools")
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
        "hints": found,
    }


def model_name(model: Any) -> Any:
    """The model as asked, without the `:latest` tag Ollama clients may add to a listed name
    (anything but a string comes back as it was, for `collection_named` to refuse)."""
    if isinstance(model, str) and model.endswith(LATEST):
        return model.removesuffix(LATEST)
    return model


def checked_messages(messages: Any, fields: frozenset[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each message of a `messages` list with where it stands (`messages[i]`), once it is an
    object with no field outside *fields*; a panel and a route turn check them alike."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        for field in message:
            if field not in fields:
                raise BadRequest(f"`{where}.{field}` is not a message field.", param=where)
        yield where, message


def _chat_messages(messages: Any) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    for where, message in checked_messages(messages, _MESSAGE_FIELDS):
        if message.get("role") == "tool" or message.get("tool_calls"):
            # in OpenAI's shape: chat_messages gives a panel's seats earlier tool turns as text
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                raise BadRequest(f"`{where}.tool_calls` must be a list.", param=where)
            converted.append({**message, "tool_calls": calls} if calls else dict(message))
            continue
        # An earlier turn's `thinking` is left out, as Ollama's own templates leave it out.
        content = message.get("content", "")
        if not isinstance(content, str):
            raise BadRequest(f"`{where}.content` must be a string.", param=where)
        converted.append(
            {
                "role": message.get("role"),
                "content": with_images(content, message.get("images"), f"{where}.images"),
            }
        )
    return converted


def _generate_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    for field, why, empty in (
        ("suffix", "fill-in-the-middle cannot be asked of a panel's chat models", ""),
        ("template", "a prompt template cannot be applied to a panel's chat models", ""),
        ("context", "a stored conversation context cannot be continued; send the messages", []),
    ):
        if body.get(field) not in (None, empty):  # only its empty value asks for nothing
            raise BadRequest(f"`{field}`: {why}.", param=field)
    if body.get("raw") is not None and body["raw"] is not False:
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
    logprobs, top = body.get("logprobs"), body.get("top_logprobs")
    for field, asked in (
        ("logprobs", logprobs is not None and logprobs is not False),
        ("top_logprobs", top is not None and whole(top) != 0),
    ):
        if asked:
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
            if name == "num_predict" and whole(value) in (-1, -2):
                continue  # no cap: what a seat does anyway
            fields[_OPTIONS[name]] = value
        if "max_tokens" in fields and (
            whole(fields["max_tokens"]) is None or fields["max_tokens"] < 1
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

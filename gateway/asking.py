"""The `Ask`: what a client asked of a panel, whatever format it asked in, and the checks
every format's reader shares (strict JSON, the model name, the shape, nominations, the reply).

A format's reader (gateway/formats/) turns its request into an `Ask`; seating and the panel run
know nothing of formats. Messages are kept in OpenAI's chat shape, litellm's own lingua franca,
so a reader of another format converts them once, in its reader. Everything is checked before
anyone is seated: a refused request calls no upstream and writes no record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gateway.errors import BadRequest
from gateway.settings import Config
from routing import ROUTER_PANEL, conversation_text, estimate_tokens, has_images

COLLECTION_PREFIX = "bench/"
MERGED = ":merged"

# Sampling fields passed on to every seat, with the JSON types each may take.
_NUMBER = (int, float)
SAMPLING: dict[str, tuple[type, ...]] = {
    "temperature": _NUMBER,
    "top_p": _NUMBER,
    "max_tokens": (int,),
    "max_completion_tokens": (int,),
    "presence_penalty": _NUMBER,
    "frequency_penalty": _NUMBER,
    "seed": (int,),
    "stop": (str, list),
    "user": (str,),
    "response_format": (dict,),
    "logit_bias": (dict,),
    "reasoning_effort": (str,),
}
_ROLES = {"system", "developer", "user", "assistant"}


@dataclass(frozen=True)
class Ask:
    requested_model: str
    collection: str  # a collection name, or ROUTER_PANEL
    shape: str
    shape_by: str  # header | collection | default
    nominees: tuple[str, ...]
    messages: list[dict[str, Any]]
    sampling: dict[str, Any]
    stream: bool
    prompt_tokens: int
    prompt: str
    merged: bool = False  # one merged answer instead of every answer side by side
    images: bool = False  # the messages carry images: a vision panel (gateway/panel.py)

    @classmethod
    def of(
        cls,
        *,
        requested_model: str,
        collection: str,
        shape: tuple[str, str],
        nominees: tuple[str, ...],
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        stream: bool,
        merged: bool,
    ) -> Ask:
        """An Ask whose prompt (the text the panel is recorded with, and its size estimated
        from) is read from the messages the one way every reader reads them: images appear in
        it as placeholders, never as their bytes."""
        prompt = conversation_text(messages)
        return cls(
            requested_model=requested_model,
            collection=collection,
            shape=shape[0],
            shape_by=shape[1],
            nominees=nominees,
            messages=messages,
            sampling=sampling,
            stream=stream,
            prompt_tokens=estimate_tokens(len(prompt)),
            prompt=prompt,
            merged=merged,
            images=has_images(messages),
        )


def collection_named(model: Any) -> tuple[str, bool]:
    """`bench/<collection>` or the bare name, `:merged` at the end for one merged answer:
    (collection, merged by name)."""
    if not isinstance(model, str) or not model.strip():
        raise BadRequest("`model` must be a collection such as bench/<name>.", param="model")
    collection = model.removeprefix(COLLECTION_PREFIX)
    return collection.removesuffix(MERGED), collection.endswith(MERGED)


def reply_merged(options: Any, collection: str, config: Config) -> bool:
    """`"bench": {"reply": "merged" | "panel"}` in the body, else the collection's own choice."""
    if options is not None:
        if not isinstance(options, dict) or set(options) - {"reply"}:
            raise BadRequest(
                '`bench` must be an object such as {"reply": "merged"}.', param="bench"
            )
        reply = options.get("reply")
        if reply is not None:
            if reply not in ("merged", "panel"):
                raise BadRequest("`bench.reply` must be merged or panel.", param="bench.reply")
            return reply == "merged"
    found = config.catalog.collection(collection)
    return found is not None and found.reply == "merged"


def json_object(raw: bytes, what: str = "The request body") -> dict[str, Any]:
    """Strict JSON: UTF-8 only, no NaN or Infinity, no lone surrogates, an object at the top."""
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        json.dumps(body, ensure_ascii=False).encode("utf-8")  # lone surrogates fail here
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"{what} is not valid JSON: {_reason(exc)}.") from None
    if not isinstance(body, dict):
        raise BadRequest(f"{what} must be a JSON object.")
    return body


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeError):
        return "it is not UTF-8 (or holds a lone surrogate)"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc)


def chat_messages(messages: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages, refused when a panel cannot take them (tools, unknown roles,
    content that is neither a string nor a list of text parts)."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        role = message.get("role")
        if not isinstance(role, str):
            raise BadRequest(f"`{where}.role` must be a string.", param=where)
        if role == "tool" or message.get("tool_calls") or message.get("function_call"):
            raise BadRequest(
                f"`{where}` carries a tool call or result; tools are not supported on a panel: "
                "ask bench/<collection>:route for a tool-calling turn.",
                param=where,
            )
        if role not in _ROLES:
            raise BadRequest(
                f"`{where}.role` must be one of {', '.join(sorted(_ROLES))}.", param=where
            )
        _check_content(message.get("content"), where)
    return messages


def _check_content(content: Any, where: str) -> None:
    """A string, or a list of text and image parts; any other part (audio, files) is refused
    by name, since a panel cannot pass it on faithfully and must not drop it silently."""
    if isinstance(content, str):
        return
    if isinstance(content, list):
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if kind == "image_url" and _image_url(part.get("image_url")):
                continue
            if isinstance(kind, str) and kind not in ("text", "image_url"):
                raise BadRequest(
                    f"`{where}.content[{j}]` is a {kind!r} part; a panel takes text and images "
                    "only.",
                    param=f"{where}.content",
                )
            if kind == "image_url":
                raise BadRequest(
                    f"`{where}.content[{j}].image_url` must be an object with a `url` that is "
                    "an https:// URL or a data:image/... URL.",
                    param=f"{where}.content",
                )
            break
        else:
            return
    raise BadRequest(
        f"`{where}.content` must be a string or a list of text and image parts.", param=where
    )


def _image_url(image: Any) -> bool:
    url = image.get("url") if isinstance(image, dict) else None
    return isinstance(url, str) and url.startswith(("https://", "http://", "data:image/"))


def sampling_of(body: dict[str, Any]) -> dict[str, Any]:
    """The sampling fields a seat is given, each of the JSON type it may take."""
    sampling = {}
    for field, types in SAMPLING.items():
        value = body.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, types):
            raise BadRequest(f"`{field}` has the wrong type.", param=field)
        sampling[field] = value
    return sampling


def shape_asked(headers: dict[str, str], collection: str, config: Config) -> tuple[str, str]:
    """(shape, how it was chosen): the X-Panel-Shape header, the collection's, or general."""
    asked = (headers.get("x-panel-shape") or "").strip()
    if asked:
        return asked.lower(), "header"
    if collection != ROUTER_PANEL:
        shape = config.collection_shape(collection)
        if shape:
            return shape, "collection"
    return "general", "default"


def nominees_of(body_value: Any, header_value: str | None) -> tuple[str, ...]:
    """Models nominated into explorer chairs: the body's list, then the X-Panel-With header."""
    names: list[str] = []
    if body_value is not None:
        if not isinstance(body_value, list) or not all(isinstance(n, str) for n in body_value):
            raise BadRequest("`with` must be a list of model aliases.", param="with")
        names.extend(body_value)
    if header_value:
        names.extend(part.strip() for part in header_value.split(","))
    return tuple(dict.fromkeys(n for n in names if n))


def one_choice(body: dict[str, Any]) -> None:
    """A panel gives one reply (its seats side by side, or merged): `n` other than 1 is refused
    rather than answered with one choice and no word."""
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise BadRequest(
            "`n` must be 1: a panel gives one reply, every seat's answer side by side "
            "(or one merged answer with bench/<collection>:merged).",
            param="n",
        )

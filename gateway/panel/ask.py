"""The `Ask`: what a client asked of a panel, whatever format it asked in, and the checks
every format's reader shares (strict JSON, the model name, the shape, nominations, the reply).

A format's reader (gateway/formats/) turns its request into an `Ask`; seating and the panel run
know nothing of formats. Messages are kept in OpenAI's chat shape, litellm's own lingua franca,
so a reader of another format converts them once, in its reader. Everything is checked before
anyone is seated: a refused request calls no upstream and writes no record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

from gateway.bodies import MAX_PART_VALUES, MAX_RESPONSE_FORMAT, values_within
from gateway.config.settings import Config
from gateway.errors import BadRequest
from gateway.panel.hints import NO_HINTS, Hints
from gateway.panel.tool_text import as_text, carries_tools
from routing import ROUTER_PANEL, conversation_text, estimate_tokens, has_images

COLLECTION_PREFIX = "bench/"
MERGED = ":merged"

# Sampling fields passed on to every seat, with the JSON types each may take and, for numbers,
# the closed range OpenAI documents. Every seat is given them: a value no provider takes would
# only be recorded as an upstream error against each innocent model.
_NUMBER = (int, float)
_INT64 = 2**63
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
RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0, 2),
    "top_p": (0, 1),
    "max_tokens": (1, _INT64 - 1),
    "max_completion_tokens": (1, _INT64 - 1),
    "presence_penalty": (-2, 2),
    "frequency_penalty": (-2, 2),
    "seed": (-_INT64, _INT64 - 1),
}
MAX_STOP = 4  # stop sequences
MAX_LOGIT_BIAS = 300  # token ids biased
MAX_WITH = 32  # nominations (a panel has at most 10 seats)
_ROLES = {"system", "developer", "user", "assistant"}
_KEPT = ("role", "content", "name")  # what of a message a seat is given


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
    images: bool = False  # the messages carry images: a vision panel (gateway/panel/run.py)
    hints: Hints = Hints()  # given to each seat that takes them, else named as dropped

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
        hints: Hints = NO_HINTS,
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
            hints=hints,
        )


def collection_named(model: Any) -> tuple[str, bool]:
    """`bench/<collection>` or the bare name, `:merged` at the end for one merged answer:
    (collection, merged by name)."""
    if not isinstance(model, str) or not model.strip():
        raise BadRequest("`model` must be a collection such as bench/<name>.", param="model")
    collection = model.removeprefix(COLLECTION_PREFIX)
    return collection.removesuffix(MERGED), collection.endswith(MERGED)


def reply_asked(options: Any) -> str | None:
    """`"bench": {"reply": "merged" | "panel"}` in the body: the reply asked for, if any."""
    if options is None:
        return None
    if not isinstance(options, dict) or set(options) - {"reply"}:
        raise BadRequest('`bench` must be an object such as {"reply": "merged"}.', param="bench")
    reply = options.get("reply")
    if reply is not None and reply not in ("merged", "panel"):
        raise BadRequest("`bench.reply` must be merged or panel.", param="bench.reply")
    return reply


def reply_merged(asked: str | None, collection: str, config: Config) -> bool:
    """The reply asked for (`reply_asked`), else the collection's own choice: merged?"""
    if asked is not None:
        return asked == "merged"
    found = config.catalog.collection(collection)
    return found is not None and found.reply == "merged"


def chat_messages(messages: Any, max_messages: int) -> list[dict[str, Any]]:
    """OpenAI chat messages, refused when a panel cannot take them (unknown roles, content that
    is neither a string nor a list of text and image parts, more than *max_messages*, or more
    content parts than that in all); earlier tool calls and results as text
    (gateway/panel/tool_text.py). Each is kept as role, content and name only: what a seat is
    given is bounded by what was checked."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    if len(messages) > max_messages:
        raise BadRequest(
            f"`messages` holds {len(messages)} messages; at most {max_messages} are taken "
            "(gateway.max_messages).",
            param="messages",
        )
    kept = []
    parts = 0
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        role = message.get("role")
        if not isinstance(role, str):
            raise BadRequest(f"`{where}.role` must be a string.", param=where)
        if carries_tools(message):  # earlier tool turns reach the seats as text
            message = as_text(message)
            role = message["role"]
        if role not in _ROLES:
            raise BadRequest(
                f"`{where}.role` must be one of {', '.join(sorted(_ROLES))}.", param=where
            )
        content = message.get("content")
        if isinstance(content, list):
            parts += len(content)
            if parts > max_messages:
                raise BadRequest(
                    f"The messages hold more than {max_messages} content parts in all.",
                    param=where,
                )
        _check_content(content, where)
        if message.get("name") is not None and not isinstance(message["name"], str):
            raise BadRequest(f"`{where}.name` must be a string.", param=where)
        kept.append({key: message[key] for key in _KEPT if message.get(key) is not None})
    return kept


def _check_content(content: Any, where: str) -> None:
    """A string, or a list of text and image parts; any other part (audio, files) is refused
    by name, since a panel cannot pass it on faithfully and must not drop it silently."""
    if isinstance(content, str):
        return
    if isinstance(content, list):
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind is not None and not values_within(part, MAX_PART_VALUES):
                raise BadRequest(
                    f"`{where}.content[{j}]` holds more than {MAX_PART_VALUES} values.",
                    param=f"{where}.content",
                )
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
    """The sampling fields a seat is given, each of the JSON type it may take, numbers finite
    and in range, `stop` and `logit_bias` within OpenAI's bounds."""
    sampling = {}
    for field, types in SAMPLING.items():
        value = body.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, types):
            raise BadRequest(f"`{field}` has the wrong type.", param=field)
        if field in RANGES:
            low, high = RANGES[field]
            if not _within(cast(float, value), low, high):
                raise BadRequest(f"`{field}` must be between {low} and {high}.", param=field)
        elif field == "stop":
            _check_stop(cast(str | list[Any], value))
        elif field == "logit_bias":
            _check_logit_bias(cast(dict[str, Any], value))
        elif field == "response_format" and not values_within(value, MAX_RESPONSE_FORMAT):
            raise BadRequest(
                f"`response_format` holds more than {MAX_RESPONSE_FORMAT} values.",
                param=field,
            )
        sampling[field] = value
    return sampling


def _within(number: float, low: float, high: float) -> bool:
    """Finite and in [low, high] (a JSON number too large for a float, such as 1e999, parses as
    infinity; a long integer is compared exactly)."""
    return (isinstance(number, int) or math.isfinite(number)) and low <= number <= high


def _check_stop(stop: str | list[Any]) -> None:
    if isinstance(stop, list) and (
        len(stop) > MAX_STOP or not all(isinstance(s, str) for s in stop)
    ):
        raise BadRequest(
            f"`stop` must be a string or a list of at most {MAX_STOP} strings.", param="stop"
        )


def _check_logit_bias(bias: dict[str, Any]) -> None:
    if len(bias) > MAX_LOGIT_BIAS:
        raise BadRequest(
            f"`logit_bias` holds {len(bias)} entries; at most {MAX_LOGIT_BIAS} are taken.",
            param="logit_bias",
        )
    for token, value in bias.items():
        if not (token.isascii() and token.isdigit() and len(token) <= 10):
            raise BadRequest(
                "`logit_bias` keys must be token ids (strings of digits).", param="logit_bias"
            )
        number = isinstance(value, _NUMBER) and not isinstance(value, bool)
        if not (number and _within(value, -100, 100)):
            raise BadRequest(
                "`logit_bias` values must be numbers between -100 and 100.", param="logit_bias"
            )


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
        if (
            not isinstance(body_value, list)
            or len(body_value) > MAX_WITH
            or not all(isinstance(n, str) for n in body_value)
        ):
            raise BadRequest(
                f"`with` must be a list of at most {MAX_WITH} model aliases.", param="with"
            )
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


def refuse_demanded_call(choice: Any, field: str) -> None:
    """A panel answers in prose, so a tool choice that demands a call (`required`, a named
    function; Anthropic's `any` and `tool`; Responses' hosted or allowed tools) is refused,
    naming route mode; `auto` and `none` ask for nothing a panel cannot give."""
    if choice is None or choice in ("auto", "none"):
        return
    if isinstance(choice, dict) and choice.get("type") in ("auto", "none"):
        return
    raise BadRequest(
        f"`{field}` demands a tool call, which a panel cannot make: it answers in prose, every "
        "seat side by side. Ask bench/<collection>:route for a tool-calling turn.",
        param=field,
    )

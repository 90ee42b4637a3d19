"""The `Ask`: what a client asked of a panel, whatever format it asked in, and the checks only a
panel makes (its messages as seats read them, the shape, nominations, the reply, a tool choice);
the checks a route turn makes too are gateway/request/checks.py's.

A format's reader (gateway/formats/) turns its request into an `Ask`; seating and the panel run
know nothing of formats. Messages are kept in OpenAI's chat shape, litellm's own lingua franca,
so a reader of another format converts them once, in its reader. Everything is checked before
anyone is seated: a refused request calls no upstream and writes no record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.config.settings import Config
from gateway.errors import BadRequest
from gateway.request.hints import NO_HINTS, Hints
from gateway.request.tool_text import as_text, carries_tools
from routing import ROUTER_PANEL, conversation_text, estimate_tokens, has_images

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
    (gateway/request/tool_text.py). Each is kept as role, content and name only: what a seat is
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
        if not isinstance(message.get("tool_calls") or [], list):
            raise BadRequest(f"`{where}.tool_calls` must be a list.", param=where)
        if not isinstance(message.get("function_call") or {}, dict):
            raise BadRequest(f"`{where}.function_call` must be an object.", param=where)
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
            if kind in ("text", "image_url"):
                _check_extras(part, kind, f"{where}.content[{j}]")
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


# A content part holds its own fields and at most a few others, each a plain value or an object
# of a few plain values (`cache_control`, an image's `detail`): passed on to every seat as they
# are, so what a seat is given stays small. /openapi.json states the same bound.
PART_PROPERTIES = 8
EXTRA_VALUES = 4
_PLAIN = (str, int, float, bool, type(None))


def _check_extras(part: dict[str, Any], kind: str, where: str) -> None:
    image = part.get("image_url")
    objects: list[tuple[dict[str, Any], tuple[str, ...]]] = [(part, ("type", kind))]
    if kind == "image_url" and isinstance(image, dict):
        objects.append((image, ("url",)))
    for value, own in objects:
        if len(value) > PART_PROPERTIES:
            raise BadRequest(f"`{where}` holds more than {PART_PROPERTIES} fields.", param=where)
        for key, extra in value.items():
            if key in own or _small(extra):
                continue
            raise BadRequest(
                f"`{where}.{key}` must be a plain value or an object of at most "
                f"{EXTRA_VALUES} plain values.",
                param=where,
            )


def _small(value: Any) -> bool:
    if isinstance(value, dict):
        return len(value) <= EXTRA_VALUES and all(isinstance(v, _PLAIN) for v in value.values())
    return isinstance(value, _PLAIN)


def _image_url(image: Any) -> bool:
    url = image.get("url") if isinstance(image, dict) else None
    return isinstance(url, str) and url.startswith(("https://", "http://", "data:image/"))


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


PANEL_REPLY = "**Panel** `"  # how a panel's reply opens (gateway/panel/reply.py `header_line`)


def refuse_panel_loop(messages: list[dict[str, Any]], most: int) -> None:
    """A conversation that carries more than *most* of a panel's own replies is an agent in a
    loop (it waits for a tool call a panel never makes): refused, naming route mode, before it
    seats another panel (gateway.panel_turns_max)."""
    replies = sum(
        1
        for m in messages
        if m.get("role") == "assistant" and conversation_text([m]).lstrip().startswith(PANEL_REPLY)
    )
    if replies > most:
        raise BadRequest(
            f"This conversation already holds {replies} panel replies (more than "
            f"gateway.panel_turns_max, {most}): an agent waiting for a tool call gets none from "
            "a panel, which answers in prose. Ask bench/<collection>:route for an agent's turns.",
            param="messages",
        )

"""OpenAI Responses, read: `input` (a string or message items) and the fields a panel reads,
every one a Responses client may send honoured, refused by name, or (its hint fields, read as
route mode reads them: gateway/formats/responses/hints.py) given to the seats that take it and
named in `X-Bench-Dropped` otherwise, made an `Ask`."""

from __future__ import annotations

from functools import partial
from typing import Any

from gateway.config.settings import Config
from gateway.errors import BadRequest
from gateway.formats.responses.events import SAMPLING
from gateway.formats.responses.hints import dropped_items, hints_of, tools_of
from gateway.panel.ask import (
    Ask,
    chat_messages,
    nominees_of,
    refuse_demanded_call,
    reply_asked,
    reply_merged,
    shape_asked,
)
from gateway.request.bounds import bounded
from gateway.request.checks import collection_named, one_choice, sampling_of
from gateway.request.hints import Hints
from gateway.upstream.translate import responses as translate

_ROLES = ("user", "assistant", "system", "developer")


_TEXT_PARTS = ("input_text", "output_text")
_TOOL_ITEMS = ("function_call", "function_call_output", "custom_tool_call",
               "custom_tool_call_output")  # fmt: skip


_STORED = (
    "cannot be honoured: the gateway keeps no responses (it answers with store false); "
    "send the whole conversation in `input`."
)


# The body's bound, pure (it may run in the body reader's child process, gateway/request/body.py,
# which must not import this module: litellm comes with it). The checks of the format's own
# fields run in `read`, on a body this has made small.
check = partial(bounded, listed="input")


def read(body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
    """A Responses body (bounded by `check`; the X-Panel-* headers, lower-cased) as an Ask."""
    model: Any = body.get("model")  # a string once collection_named accepts it
    collection, merged_by_name = collection_named(model)
    one_choice(body)
    _refuse_unhonoured(body)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise BadRequest("`instructions` must be a string.", param="instructions")
    input_ = _checked_input(body.get("input"))
    try:
        messages = translate.messages_of(input_, instructions)
    except translate.Unreadable as exc:
        raise BadRequest(f"`input` could not be read: {exc}", param="input") from None
    messages = chat_messages(messages, config.gateway.max_messages)
    shape = shape_asked(headers, collection, config)
    nominees = nominees_of(body.get("with"), headers.get("x-panel-with"))
    merged = merged_by_name or reply_merged(reply_asked(body.get("bench")), collection, config)
    return Ask.of(
        requested_model=model,
        collection=collection,
        shape=shape,
        nominees=nominees,
        messages=messages,
        sampling=_sampling(body),
        stream=stream,
        merged=merged,
        hints=_tools_dropped(body, dropped_items(input_, hints_of(body))),
    )


def _tools_dropped(body: dict[str, Any], found: Hints) -> Hints:
    """A panel answers in prose: its function tools are named `tools`, hosted ones by name,
    and `parallel_tool_calls` (which a provider refuses without tools) with them."""
    offered, _namespaces, found = tools_of(body.get("tools"), found, unique=False)
    if body.get("parallel_tool_calls") is not None:
        found = found.withdraw("parallel_tool_calls")
    return found.drop("tools") if offered else found


def _refuse_unhonoured(body: dict[str, Any]) -> None:
    store = body.get("store")
    if store is not None and not isinstance(store, bool):
        raise BadRequest("`store` must be true or false.", param="store")
    if store:
        raise BadRequest(f"`store: true` {_STORED}", param="store")
    for field in ("previous_response_id", "conversation"):
        if body.get(field) is not None:
            raise BadRequest(f"`{field}` {_STORED}", param=field)
    if body.get("prompt") is not None:
        raise BadRequest(
            "`prompt` (a stored prompt) cannot be honoured; send `input`.", param="prompt"
        )
    background = body.get("background")
    if background is not None and not isinstance(background, bool):
        raise BadRequest("`background` must be true or false.", param="background")
    if background:
        raise BadRequest(
            "`background` cannot be honoured: a panel answers in the request.", param="background"
        )
    refuse_demanded_call(body.get("tool_choice"), "tool_choice")


def _checked_input(input_: Any) -> str | list[Any]:
    if isinstance(input_, str):
        return input_
    if not isinstance(input_, list) or not input_:
        raise BadRequest("`input` must be a string or a non-empty list of items.", param="input")
    for i, item in enumerate(input_):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        kind = item.get("type", "message")
        if kind == "message":
            _check_message(item, where)
        elif not isinstance(kind, str):
            raise BadRequest(f"`{where}.type` must be a string.", param=where)
        elif kind in _TOOL_ITEMS or kind == "reasoning":  # reasoning: named as dropped
            continue  # litellm reads them as tool calls and results: the seats read them as text
        elif kind.endswith(("_call", "_call_output")) or kind.startswith("mcp_"):
            raise BadRequest(
                f"`{where}` is a hosted tool's call or result ({kind}), which ran on the "
                "provider's side; a panel's seats cannot be given it.",
                param=where,
            )
        elif kind == "item_reference":
            raise BadRequest(f"`{where}` refers to a stored item; {_STORED}", param=where)
        else:
            raise BadRequest(f"`{where}` ({kind}) cannot be honoured on a panel.", param=where)
    return input_


def _check_message(item: dict[str, Any], where: str) -> None:
    if item.get("role") not in _ROLES:
        raise BadRequest(f"`{where}.role` must be one of {', '.join(_ROLES)}.", param=where)
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise BadRequest(f"`{where}.content` must be a string or a list of parts.", param=where)
    for j, part in enumerate(content):
        at = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            continue
        if kind == "input_image" and part.get("file_id") is not None:
            raise BadRequest(f"`{at}`: file ids cannot be honoured; send `image_url`.", param=at)
        if kind == "input_image" and isinstance(part.get("image_url"), str):
            continue
        if kind == "input_file":
            raise BadRequest(f"`{at}`: files cannot be honoured on a panel.", param=at)
        if kind == "input_audio":
            raise BadRequest(f"`{at}`: audio cannot be honoured on a panel.", param=at)
        raise BadRequest(
            f"`{at}` must be input_text or output_text with string text, or an input_image "
            "with an image_url.",
            param=at,
        )


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    """The sampling fields in chat's names, through the shared checks (named as sent)."""
    chat = {ours: body.get(theirs) for theirs, ours in SAMPLING.items()}
    text = body.get("text")
    if text is not None:
        if not isinstance(text, dict):
            raise BadRequest("`text` must be an object.", param="text")
        format_ = text.get("format")
        kind = format_.get("type") if isinstance(format_, dict) else None
        if format_ is not None and kind not in ("text", "json_object", "json_schema"):
            raise BadRequest(
                "`text.format.type` must be text, json_object or json_schema.", param="text.format"
            )
        schema = format_.get("schema") if isinstance(format_, dict) else None
        if kind == "json_schema" and not isinstance(schema, dict):
            raise BadRequest(
                "`text.format.schema` must be a JSON schema object.", param="text.format"
            )
        chat["response_format"] = translate.response_format_of(text)
    try:
        return sampling_of(chat)
    except BadRequest as error:
        theirs = {ours: theirs for theirs, ours in SAMPLING.items()}
        name = theirs.get(error.param or "", error.param)
        if error.param == "response_format":
            name = "text"
        raise BadRequest(
            error.message.replace(f"`{error.param}`", f"`{name}`"), param=name
        ) from None

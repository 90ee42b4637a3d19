"""Anthropic Messages, read: the body made plain (gateway/formats/anthropic/hints.py: its hint
fields offered to the seats that take them, betas and unknown fields named as dropped,
system-role messages folded into the system text), every field a panel reads checked (one it
cannot honour is a 400 that says so), then litellm's adapter (gateway/upstream/translate) makes
OpenAI chat messages and sampling of it, which pass the shared chat checks; `count` estimates
its tokens."""

from __future__ import annotations

from functools import partial
from typing import Any

from gateway.config.settings import Config
from gateway.errors import BadRequest, NotFound
from gateway.formats.anthropic.hints import plain
from gateway.panel.ask import (
    Ask,
    chat_messages,
    nominees_of,
    refuse_demanded_call,
    reply_asked,
    reply_merged,
    shape_asked,
)
from gateway.request.bounds import bounded, whole
from gateway.request.checks import collection_named, sampling_of
from gateway.upstream.translate.anthropic import to_openai_chat
from routing import ROUTER_PANEL
from routing.refusals import did_you_mean, echo

_PASSED = ("system", "max_tokens", "temperature", "top_p", "stop_sequences")


# Read by litellm's adapter as tool calls and results, which reach the seats as text.
_TOOL_BLOCKS = ("tool_use", "tool_result")


_BLOCK_WHY = {
    "document": "documents are not supported on a panel",
    "search_result": "search results are not supported on a panel",
    "container_upload": "container uploads are not supported by the gateway",
    "thinking": "thinking blocks in earlier turns are not supported on a panel",
    "redacted_thinking": "thinking blocks in earlier turns are not supported on a panel",
}


# The body's bound, pure (it may run in the body reader's child process, gateway/request/body.py,
# which must not import this module: litellm comes with it). The checks of the format's own
# fields run in `read`, on a body this has made small.
check = partial(bounded, listed="messages")


def read(body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
    """A Messages body (bounded by `check`; the X-Panel-* headers, lower-cased) as an Ask."""
    return _read(body, headers, config, counting=False)


def count(body: dict[str, Any], headers: dict[str, str], config: Config) -> tuple[str, int]:
    """`/v1/messages/count_tokens`: (collection, the gateway's own estimate of the prompt's
    tokens), the body bounded by `check` as a panel's is. Nothing is seated or called: the
    estimate is the one seating uses."""
    ask = _read(body, headers, config, counting=True)
    if ask.collection != ROUTER_PANEL and config.catalog.collection(ask.collection) is None:
        names = [c.name for c in config.catalog.collections]
        known = ", ".join(f"bench/{name}" for name in names)
        raise NotFound(
            f"Unknown collection {echo(ask.collection)!r}"
            f"{did_you_mean(ask.collection, names, 'bench/{}') or '.'} Collections: {known}; "
            f"or bench/{ROUTER_PANEL}.",
            param="model",
        )
    return ask.collection, ask.prompt_tokens


def _read(body: dict[str, Any], headers: dict[str, str], config: Config, counting: bool) -> Ask:
    read = plain(body, headers)
    body = read.body
    refuse_demanded_call(body.get("tool_choice"), "tool_choice")
    found = read.hints.drop("tools") if body.get("tools") else read.hints  # answered in prose
    model: Any = body.get("model")  # a string once collection_named accepts it
    collection, merged_by_name = collection_named(model)
    max_tokens = whole(body.get("max_tokens"))  # 56.0 is a whole number, as JSON's integer
    if not counting and body.get("max_tokens") is None:
        raise BadRequest("`max_tokens` is required.", param="max_tokens")
    if body.get("max_tokens") is not None and (max_tokens is None or max_tokens < 1):
        raise BadRequest("`max_tokens` must be a whole number of at least 1.", param="max_tokens")
    _check_messages(body.get("messages"))
    _check_system(body.get("system"))
    _check_extras(body)
    wanted = {k: body[k] for k in _PASSED if body.get(k) is not None}
    if max_tokens is not None:
        wanted["max_tokens"] = max_tokens
    chat = to_openai_chat({"model": model, "messages": body["messages"], **wanted})
    messages = chat_messages(chat.get("messages"), config.gateway.max_messages)
    sampling = sampling_of(chat)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    merged = merged_by_name or reply_merged(reply_asked(body.get("bench")), collection, config)
    return Ask.of(
        requested_model=model,
        collection=collection,
        shape=shape_asked(headers, collection, config),
        nominees=nominees_of(body.get("with"), headers.get("x-panel-with")),
        messages=messages,
        sampling=sampling,
        stream=stream,
        merged=merged,
        hints=found,
    )


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise BadRequest(
                f"`{where}` must be an object with role user or assistant.", param=where
            )
        content = message.get("content")
        if content == "" and message["role"] == "user":  # the adapter would drop it unsaid
            raise BadRequest(f"`{where}.content` is empty.", param=where)
        if isinstance(content, str):
            continue
        if not isinstance(content, list) or not content:
            raise BadRequest(
                f"`{where}.content` must be a string or a list of blocks.", param=where
            )
        for j, block in enumerate(content):
            _check_block(block, f"{where}.content[{j}]", message["role"])


def _check_block(block: Any, where: str, role: str) -> None:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise BadRequest(f"`{where}.text` must be a string.", param=where)
    elif kind == "image" and role == "user":
        _check_image(block.get("source"), where)
    elif kind == "image":
        raise BadRequest(f"`{where}`: images in assistant turns are not supported.", param=where)
    elif kind in _TOOL_BLOCKS:
        if (kind == "tool_use") != (role == "assistant"):  # the adapter would drop it unsaid
            turn = "an assistant" if kind == "tool_use" else "a user"
            raise BadRequest(f"`{where}`: a {kind} block belongs in {turn} turn.", param=where)
    elif kind == "server_tool_use" or (isinstance(kind, str) and kind.endswith("_tool_result")):
        raise BadRequest(
            f"`{where}` is a {kind} block, a tool Anthropic ran on its side; a panel's seats "
            "cannot be given it.",
            param=where,
        )
    elif isinstance(kind, str):
        why = _BLOCK_WHY.get(kind, "the gateway does not support it")
        raise BadRequest(f"`{where}` is a {kind!r} block: {why}.", param=where)
    else:
        raise BadRequest(f"`{where}` must be a content block with a `type`.", param=where)


def _check_image(source: Any, where: str) -> None:
    kind = source.get("type") if isinstance(source, dict) else None
    if kind == "base64":
        media, data = source.get("media_type"), source.get("data")
        if isinstance(media, str) and media.startswith("image/") and isinstance(data, str) and data:
            return
    elif kind == "url":
        url = source.get("url")
        if isinstance(url, str) and url.startswith(("https://", "http://")):
            return
    elif kind == "file":
        raise BadRequest(f"`{where}`: file ids are not supported by the gateway.", param=where)
    raise BadRequest(
        f"`{where}.source` must be base64 (media_type image/..., data) or a url.", param=where
    )


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if isinstance(system, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in system
    ):
        return
    raise BadRequest("`system` must be a string or a list of text blocks.", param="system")


def _check_extras(body: dict[str, Any]) -> None:
    stops = body.get("stop_sequences")
    if stops is not None and not (
        isinstance(stops, list) and all(isinstance(s, str) for s in stops)
    ):
        raise BadRequest("`stop_sequences` must be a list of strings.", param="stop_sequences")
    for field in ("temperature", "top_p"):
        value = body.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise BadRequest(f"`{field}` must be a number.", param=field)

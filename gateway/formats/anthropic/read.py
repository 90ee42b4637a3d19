"""Anthropic Messages, read: every field checked (a field the gateway cannot honour is a 400
that says so), then litellm's adapter (gateway/upstream/translate) makes OpenAI chat messages
and sampling of it, which pass the shared chat checks; `count` estimates its tokens."""

from __future__ import annotations

from functools import partial
from typing import Any

from gateway.bodies import bounded
from gateway.config.settings import Config
from gateway.errors import BadRequest, NotFound
from gateway.panel.ask import (
    Ask,
    chat_messages,
    collection_named,
    nominees_of,
    reply_asked,
    reply_merged,
    sampling_of,
    shape_asked,
)
from gateway.upstream.translate.anthropic import to_openai_chat
from routing import ROUTER_PANEL
from routing.refusals import did_you_mean, echo

_PASSED = ("system", "max_tokens", "temperature", "top_p", "stop_sequences", "metadata")


_OURS = ("model", "messages", "stream", "top_k", "thinking", "with", "bench", "cache_control")


# Provider options a panel honours only at their default: anything else is refused.
_DEFAULTS = {"service_tier": ("auto", "standard_only"), "speed": ("standard",)}


_ROUTE = ("tools", "tool_choice")


_WHY_NOT = {
    "container": "code-execution containers are not supported by the gateway",
    "mcp_servers": "MCP servers are not supported by the gateway",
    "context_management": "context management is not supported by the gateway",
    "output_format": "structured output is not supported on a panel",
    "output_config": "structured output is not supported on a panel",
    "service_tier": "only the default service tier (auto) is honoured on a panel",
    "speed": "only the standard speed is honoured on a panel",
    "inference_geo": "the gateway cannot choose where its seats' providers run",
}


_ROUTE_BLOCKS = ("tool_use", "tool_result", "server_tool_use")


_BLOCK_WHY = {
    "document": "documents are not supported on a panel",
    "search_result": "search results are not supported on a panel",
    "container_upload": "container uploads are not supported by the gateway",
    "thinking": "thinking blocks in earlier turns are not supported on a panel",
    "redacted_thinking": "thinking blocks in earlier turns are not supported on a panel",
}


_THINKING = ("enabled", "disabled", "adaptive")


# The body's bound, pure (it may run in the body reader's child process, gateway/bodies.py,
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
            f"{did_you_mean(ask.collection, names, 'bench/{}')}. Collections: {known}; "
            f"or bench/{ROUTER_PANEL}.",
            param="model",
        )
    return ask.collection, ask.prompt_tokens


def _read(body: dict[str, Any], headers: dict[str, str], config: Config, counting: bool) -> Ask:
    _refuse_unknown(body)
    model: Any = body.get("model")  # a string once collection_named accepts it
    collection, merged_by_name = collection_named(model)
    max_tokens = body.get("max_tokens")
    if not counting and max_tokens is None:
        raise BadRequest("`max_tokens` is required.", param="max_tokens")
    if max_tokens is not None and (type(max_tokens) is not int or max_tokens < 1):
        raise BadRequest("`max_tokens` must be a whole number of at least 1.", param="max_tokens")
    _check_messages(body.get("messages"))
    _check_system(body.get("system"))
    _check_extras(body)
    wanted = {k: body[k] for k in (*_PASSED, "thinking") if body.get(k) is not None}
    chat = to_openai_chat({"model": model, "messages": body["messages"], **wanted})
    if (body.get("thinking") or {}).get("type") == "disabled":
        chat.pop("reasoning_effort", None)  # asked for no thinking: ask for none
    messages = chat_messages(chat.get("messages"), config.gateway.max_messages)
    sampling = sampling_of(chat)
    if body.get("top_k") is not None:
        sampling["top_k"] = body["top_k"]
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
    )


def _refuse_unknown(body: dict[str, Any]) -> None:
    for field in body:
        if field in _PASSED or field in _OURS:
            continue
        if field in _DEFAULTS and body[field] in (None, *_DEFAULTS[field]):
            continue
        if field in _ROUTE:
            raise BadRequest(
                f"`{field}` is not supported on a panel; ask bench/<collection>:route for a "
                "tool-calling turn.",
                param=field,
            )
        why = _WHY_NOT.get(field, "the gateway does not support it")
        raise BadRequest(f"`{field}`: {why}.", param=field)


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
    elif kind in _ROUTE_BLOCKS or (isinstance(kind, str) and kind.endswith("_tool_result")):
        raise BadRequest(
            f"`{where}` is a {kind} block; tools are not supported on a panel: ask "
            "bench/<collection>:route for a tool-calling turn.",
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
        if isinstance(media, str) and media.startswith("image/") and isinstance(data, str):
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
    top_k = body.get("top_k")
    if top_k is not None and (type(top_k) is not int or top_k < 0):
        raise BadRequest("`top_k` must be a whole number of at least 0.", param="top_k")
    stops = body.get("stop_sequences")
    if stops is not None and not (
        isinstance(stops, list) and all(isinstance(s, str) for s in stops)
    ):
        raise BadRequest("`stop_sequences` must be a list of strings.", param="stop_sequences")
    metadata = body.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and set(metadata) <= {"user_id"}
        and isinstance(metadata.get("user_id", ""), str | None)
    ):
        raise BadRequest("`metadata` may hold only a string `user_id`.", param="metadata")
    thinking = body.get("thinking")
    if thinking is not None and not (
        isinstance(thinking, dict)
        and thinking.get("type") in _THINKING
        and (thinking.get("type") != "enabled" or type(thinking.get("budget_tokens")) is int)
    ):
        raise BadRequest(
            "`thinking` must be {type: enabled, budget_tokens: N}, adaptive or disabled.",
            param="thinking",
        )
    for field in ("temperature", "top_p"):
        value = body.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise BadRequest(f"`{field}` must be a number.", param=field)

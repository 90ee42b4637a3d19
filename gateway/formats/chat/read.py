"""OpenAI chat completions, read: a request body checked (`check`, pure and bounded, may run
in the body reader's child process) and made an `Ask` (`read`).

A panel answers in prose: tools offered to it are not offered to its seats (`X-Bench-Dropped:
tools`), earlier tool calls and results reach them as text, and only a `tool_choice` that
demands a call is refused, naming route mode. Hint fields (`reasoning_effort`, `store`, ...) go
to each seat whose provider takes them (gateway/request/hints.py); a field the gateway does not
know is named as dropped, never passed on or lost unnamed."""

from __future__ import annotations

from typing import Any

from gateway.config.schema import GatewaySettings
from gateway.config.settings import Config
from gateway.errors import BadRequest
from gateway.panel.ask import (
    Ask,
    chat_messages,
    nominees_of,
    refuse_demanded_call,
    reply_asked,
    reply_merged,
    shape_asked,
)
from gateway.request.checks import SAMPLING, collection_named, one_choice, sampling_of
from gateway.request.hints import CHAT_HINTS, chat_hints

_TOOLS = ("functions", "tools")
_KNOWN = frozenset({"model", "messages", "stream", "stream_options", "with", "bench", "n",
                    "tool_choice", "function_call", *_TOOLS, *SAMPLING, *CHAT_HINTS})  # fmt: skip


def check(body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A parsed chat-completions body, checked, as the fields a panel reads: every one bounded
    (messages, stop, logit_bias, ...), the rest dropped. Pure, so it may run in the body
    reader's child process (gateway/request/body.py); nothing that needs the catalog is done
    here."""
    collection_named(body.get("model"))
    messages = chat_messages(body.get("messages"), settings.max_messages)
    one_choice(body)
    refuse_demanded_call(body.get("tool_choice"), "tool_choice")
    refuse_demanded_call(body.get("function_call"), "function_call")
    sampling = sampling_of(body)
    hints = chat_hints(body, [f for f in CHAT_HINTS if f != "parallel_tool_calls"])
    sampling.pop("reasoning_effort", None)  # a hint: checked above, given where it is taken
    hints = hints.drop(*(field for field in _TOOLS if body.get(field)))  # `tools: []`: none
    if body.get("parallel_tool_calls") is not None:
        hints = hints.drop("parallel_tool_calls")
    hints = hints.drop(*(field for field in body if field not in _KNOWN))
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    return {
        "hints": hints,
        "model": body["model"],
        "messages": messages,
        "sampling": sampling,
        "stream": stream,
        "with": nominees_of(body.get("with"), None),
        "reply": reply_asked(body.get("bench")),
    }


def read(body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
    """A checked chat-completions body (and the X-Panel-* headers, lower-cased) as an Ask."""
    model = body["model"]
    collection, merged_by_name = collection_named(model)
    shape = shape_asked(headers, collection, config)
    nominees = nominees_of(list(body["with"]), headers.get("x-panel-with"))
    merged = merged_by_name or reply_merged(body["reply"], collection, config)
    return Ask.of(
        requested_model=model,
        collection=collection,
        shape=shape,
        nominees=nominees,
        messages=body["messages"],
        sampling=body["sampling"],
        stream=body["stream"],
        merged=merged,
        hints=body["hints"],
    )

"""OpenAI legacy completions, read: a `prompt` checked as one user message (`check`) and made
an `Ask` (`read`). The fields a panel cannot honour are refused, not dropped; route mode too, as
this format carries no tools (`read_route`)."""

from __future__ import annotations

from typing import Any

from gateway.config.schema import GatewaySettings
from gateway.config.settings import Config
from gateway.errors import BadRequest
from gateway.panel.ask import (
    Ask,
    chat_messages,
    nominees_of,
    reply_asked,
    reply_merged,
    shape_asked,
)
from gateway.request.checks import SAMPLING, collection_named, one_choice, sampling_of
from gateway.request.hints import Hints
from gateway.route.ask import RouteAsk

_KNOWN = frozenset({"model", "prompt", "stream", "stream_options", "with", "bench", "n", "echo",
                    "suffix", "best_of", "logprobs", *SAMPLING})  # fmt: skip


def check(body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A parsed completions body, checked, as the fields a panel reads, each bounded (the
    prompt as one chat message, the sampling through the checks chat's get). Pure, so it may
    run in the body reader's child process (gateway/request/body.py)."""
    model = body.get("model")
    collection_named(model)
    prompt = _prompt(body.get("prompt"))
    one_choice(body)
    if body.get("echo") not in (None, False):
        raise BadRequest(
            "`echo` cannot be honoured: a panel's text is not a continuation.", param="echo"
        )
    if body.get("suffix") not in (None, ""):
        raise BadRequest("`suffix` (insertion) cannot be honoured on a panel.", param="suffix")
    best_of = body.get("best_of")
    if best_of is not None and (isinstance(best_of, bool) or best_of != 1):
        raise BadRequest(
            "`best_of` must be 1 on a panel: every seat's answer is shown.", param="best_of"
        )
    if body.get("logprobs") is not None:
        raise BadRequest("`logprobs` cannot be honoured on a panel.", param="logprobs")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    unknown = (field for field in body if field not in _KNOWN)
    return {
        "hints": Hints().drop(*unknown),  # a field it does not know: named, never lost unsaid
        "model": model,
        "messages": chat_messages([{"role": "user", "content": prompt}], settings.max_messages),
        "sampling": sampling_of(body),
        "stream": stream,
        "with": nominees_of(body.get("with"), None),
        "reply": reply_asked(body.get("bench")),
    }


def read(body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
    """A checked completions body (and the X-Panel-* headers, lower-cased) as an Ask."""
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
        hints=body["hints"],
    )


def _prompt(prompt: Any) -> str:
    """A string, or a list of exactly one string (several prompts would be several panels)."""
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise BadRequest(
            "`prompt` must be a string (or a list of one string): one prompt is one panel.",
            param="prompt",
        )
    return prompt


def read_route(body: dict[str, Any], headers: dict[str, str], collection: str) -> RouteAsk:
    """Route mode needs tools, which a text completion cannot carry: refused, naming the
    formats that take it."""
    raise BadRequest(
        f"Route mode (bench/{collection}:route) is not available in the completions format, "
        "which carries no tools; ask it through /v1/chat/completions, /v1/messages, "
        "/v1/responses, /api/chat or Gemini's generateContent.",
        param="model",
    )

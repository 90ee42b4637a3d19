"""The Responses objects a panel is rendered as: the completed `response` (litellm's translation
with the panel's ids, the model as asked, and `bench`) and the typed events of its stream, each
numbered with a rising `sequence_number`, as the official SDK reads them."""

from __future__ import annotations

import json
from typing import Any

from gateway.errors import GatewayError, TooManyRequests
from gateway.panel.ask import Ask
from gateway.panel.run import Completion, PanelRun
from gateway.upstream.translate import responses as translate

# Responses fields that are chat sampling fields, by their chat name.
SAMPLING = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "user": "user",
}


def response_body(ask: Ask, done: Completion, text: str | None = None) -> dict[str, Any]:
    """The completed `response`: litellm's translation of the panel's reply, the panel's ids,
    the model as asked, and `bench`."""
    chat = {
        "id": f"chatcmpl-{done.panel_id}",
        "object": "chat.completion",
        "created": int(done.created),
        "model": done.model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": done.text if text is None else text},
            }
        ],
        "usage": done.usage,
    }
    ids = (f"resp_{done.panel_id}", f"msg_{done.panel_id}")
    body = translate.response_of(chat, _echo(ask), *ids)
    body["model"] = done.model
    body["bench"] = done.bench
    return body


def _echo(ask: Ask) -> dict[str, Any]:
    """The request fields a response repeats, from the Ask's sampling."""
    sampling = ask.sampling
    echo = {theirs: sampling.get(ours) for theirs, ours in SAMPLING.items()}
    response_format = sampling.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        schema = response_format.get("json_schema") or {}
        echo["text"] = {"format": {"type": kind, **schema}}
    return echo


class Events:
    """One stream's typed events, numbered in the order they are sent."""

    def __init__(self, run: PanelRun) -> None:
        facts = run.facts
        self.ask = run.ask
        self.sequence = 0
        self.text: list[str] = []
        self.message_id = f"msg_{facts.panel_id}"
        self.where = {"item_id": self.message_id, "output_index": 0, "content_index": 0}
        self.response = {
            "id": f"resp_{facts.panel_id}",
            "object": "response",
            "created_at": int(facts.created),
            "model": facts.requested_model,
            "status": "in_progress",
            "output": [],
            "error": None,
            "incomplete_details": None,
            "usage": None,
            "store": False,
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": False,
            "metadata": {},
            "text": {"format": {"type": "text"}},
        }

    def event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        data = json.dumps(payload, separators=(",", ":"))
        return f"event: {kind}\ndata: {data}\n\n".encode()

    def opening(self) -> list[bytes]:
        item = self._item("in_progress", [])
        return [
            self.event("response.created", response=self.response),
            self.event("response.in_progress", response=self.response),
            self.event("response.output_item.added", output_index=0, item=item),
            self.event("response.content_part.added", **self.where, part=self._part("")),
        ]

    def delta(self, text: str) -> bytes:
        self.text.append(text)
        return self.event("response.output_text.delta", **self.where, delta=text, logprobs=[])

    def closing(self, done: Completion) -> list[bytes]:
        text = "".join(self.text)
        part = self._part(text)
        return [
            self.event("response.output_text.done", **self.where, text=text, logprobs=[]),
            self.event("response.content_part.done", **self.where, part=part),
            self.event(
                "response.output_item.done", output_index=0, item=self._item("completed", [part])
            ),
            self.event("response.completed", response=response_body(self.ask, done, text)),
        ]

    def failed(self, error: GatewayError) -> list[bytes]:
        code = "rate_limit_exceeded" if isinstance(error, TooManyRequests) else "server_error"
        failed = {
            **self.response,
            "status": "failed",
            "error": {"code": code, "message": error.message},
            **error.extra,  # bench, with every seat
        }
        return [
            self.event("error", code=error.code, message=error.message, param=error.param),
            self.event("response.failed", response=failed),
        ]

    def _item(self, status: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "type": "message",
            "id": self.message_id,
            "status": status,
            "role": "assistant",
            "content": content,
        }

    @staticmethod
    def _part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "text": text, "annotations": []}

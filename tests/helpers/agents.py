"""Requests the coding agents really send, captured from the programs themselves against a
scripted upstream and trimmed (long texts cut, most tools left out, machine paths replaced):
Claude Code 2.1.197, Codex CLI 0.171.0, Gemini CLI 0.61.0, Qwen Code 0.15.10, opencode 1.18.33.
Each is `{"path", "headers", "body"}`, headers lower-cased, in tests/helpers/captured/."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "captured"


@cache
def _file(agent: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HERE / f"{agent}.json").read_text())
    return loaded


def captured(agent: str, name: str, **body: Any) -> dict[str, Any]:
    """A copy of one captured request, its body's fields updated with *body* (the model,
    typically, which names the agent's own model)."""
    request = copy.deepcopy(_file(agent)[name])
    request["body"].update(body)
    return request


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE body's `data:` lines (`[DONE]` left out)."""
    return [
        json.loads(line[6:])
        for line in text.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]

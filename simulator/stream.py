"""A streamed answer: server-sent chat-completion chunks, and the faults a stream can have
(cut, stalled, malformed, an error mid-stream, no [DONE])."""

from __future__ import annotations

import json
import re
from typing import Any

from simulator.errors import error_body
from simulator.exchange import Exchange


async def stream(
    ex: Exchange,
    answer: str,
    base: dict[str, Any],
    usage: dict[str, int] | None,
    tool_calls: list[dict[str, Any]] | None = None,
) -> None:
    """SSE chunks: role, content in 3-word groups (or `chunk_chars` characters each; or a
    tool call's deltas: its id and name, then its arguments in two halves), finish, optional
    usage, ``[DONE]``."""
    b = ex.b

    async def event(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> None:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        chunk = {**base, "object": "chat.completion.chunk", "choices": choices, **extra}
        await ex.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

    if b["answer_bytes"] is not None:  # one string sent again and again, never built whole
        size = b["piece_bytes"]
        whole, rest = divmod(b["answer_bytes"], size)
        piece = filler(size)
        pieces = [piece] * whole + ([piece[:rest]] if rest else [])
    elif b["chunk_chars"]:
        size = b["chunk_chars"]
        pieces = [answer[i : i + size] for i in range(0, len(answer), size)]
    else:
        words = re.findall(r"\s*\S+\s*", answer) or ([answer] if answer else [])
        pieces = ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]
    await ex.start(
        200,
        [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            *ex.stated_headers(),
        ],
    )
    await event({"role": "assistant", "content": ""})
    if (b["reasoning"] or b["think_s"]) and not await _think(ex, event):
        return
    if tool_calls:
        if not await _stream_calls(ex, event, tool_calls):
            return
        pieces = []
    for i in range(len(pieces) + 1):
        if b["stream_cut_after"] == i:
            return await ex.drop(abrupt=False, outcome="cut")
        if b["stream_stall_after"] == i:
            return await ex.wait_for_client_to_leave("stalled")
        if b["malformed_chunk"] and i == min(1, len(pieces)):
            await ex.write(b"data: {this chunk is not json\n\n")
        if i == len(pieces):
            break
        if not await ex.pause(b["chunk_delay_s"] if i else 0):
            return
        if b["error_after"] == i:
            ex.finish("error_after")
            error = error_body(500, f"Simulated failure mid-stream from {ex.model}.")
            await ex.write(b"data: " + json.dumps(error).encode() + b"\n\n", more=False)
            return
        await event({"content": pieces[i]})
    await event({}, "tool_calls" if tool_calls else "stop")
    if usage is not None:
        await event(None, usage=usage)
    ex.finish("no_done" if b["no_done"] else "ok")
    await ex.write(b"" if b["no_done"] else b"data: [DONE]\n\n", more=False)


async def _think(ex: Exchange, event: Any) -> bool:
    """The reasoning as `reasoning_content` deltas, spread over `think_s` (or at once);
    False if the client left meanwhile."""
    b = ex.b
    words = re.findall(r"\s*\S+\s*", b["reasoning"] or "")
    parts = ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]
    step = (b["think_s"] or 0) / (len(parts) + 1)
    for part in parts:
        if not await ex.pause(step):
            return False
        await event({"reasoning_content": part})
    return await ex.pause(step)


async def _stream_calls(ex: Exchange, event: Any, tool_calls: list[dict[str, Any]]) -> bool:
    """Each call's id and name, then its arguments in two halves. `stream_cut_after` here
    counts these deltas: a cut inside a call's arguments. False if the stream ended."""
    sent = 0

    async def send(delta: dict[str, Any]) -> bool:
        nonlocal sent
        await event({"tool_calls": [delta]})
        sent += 1
        if ex.b["stream_cut_after"] == sent:
            await ex.drop(abrupt=False, outcome="cut")
            return False
        return True

    for index, call in enumerate(tool_calls):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function"}
        head["function"] = {"name": function["name"], "arguments": ""}
        if not await send(head):
            return False
        arguments = function["arguments"]
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            if not await ex.pause(ex.b["chunk_delay_s"]):
                return False
            if not await send({"index": index, "function": {"arguments": part}}):
                return False
    return True


def filler(size: int) -> str:
    """*size* bytes of text, for an answer too large to pass on."""
    return ("All work and no play. " * (size // 22 + 1))[:size]

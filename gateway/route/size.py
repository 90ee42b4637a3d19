"""How many bytes of an upstream's chunk a route turn relays: what `gateway.max_answer_bytes`
counts.

Why every field: a route turn relays a member's chunks as they come, and keeps the answer for
its record, so whatever an upstream puts in a chunk reaches the client and the store. Counting
only text, reasoning and arguments let a tool call's name (or a role, a legacy function_call,
a field of the provider's own) carry 52 MB a turn past the limit. So the payload counts whole:
text, reasoning, thinking blocks, tool-call ids, names and arguments, a function_call, logprobs
and every field the provider added to a delta. What every chunk repeats, its frame (the chunk's
id, the role, a tool call's type, the usage, the provider's fields on the chunk itself such as
`system_fingerprint`), counts past `FRAME_BYTES` a chunk: an honest stream of one-token chunks
is counted by its text, not by what each chunk says again, and a hostile frame still counts.

Both readers hand route mode the same typed chunk (gateway/upstream/chunks.py), whose `extra`
on the chunk and on each delta holds every field it does not declare; those count whole too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.upstream.chunks import Chunk

# A chunk's frame counted free: an honest one (an id, a role, a fingerprint, a usage) is well
# under this; a hostile one counts past it.
FRAME_BYTES = 256


def relayed_bytes(chunk: Chunk) -> int:
    """The bytes of *chunk* that count against the answer's limit (read once per relayed chunk:
    the fields every chunk has, by attribute; the rest only when present)."""
    frame = _text(chunk.id) + (_fields(chunk.extra) if chunk.extra else 0)
    payload = 0
    for choice in chunk.choices:
        if choice.logprobs is not None:
            payload += _bytes(choice.logprobs)
        delta = choice.delta
        frame += _text(delta.role)
        payload += _text(delta.content) + _text(delta.reasoning_content)
        if delta.function_call is not None:
            payload += _bytes(delta.function_call)
        if delta.thinking_blocks is not None:
            payload += _bytes(delta.thinking_blocks)
        if delta.extra:  # audio, images, annotations, a provider's own fields, ...
            payload += _fields(delta.extra)
            thought = delta.reasoning_content
            if thought is not None and delta.extra.get("reasoning") == thought:  # litellm's twin
                payload -= _text(thought) + len("reasoning")
        for part in delta.tool_calls or ():
            frame += _text(part.type)
            payload += _text(part.id)
            payload += _text(part.function.name)
            payload += _text(part.function.arguments)
    if chunk.usage is not None:
        frame += _bytes(chunk.usage)
    return payload + max(0, frame - FRAME_BYTES)


def _fields(found: Mapping[str, Any]) -> int:
    """The fields a provider added that the chunk does not declare, names and values."""
    return sum(_text(str(k)) + _bytes(v) for k, v in found.items())


def _text(value: Any) -> int:
    if not isinstance(value, str):
        return _bytes(value)
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def _bytes(value: Any) -> int:
    """About the bytes *value* takes in JSON: its strings, keys and numbers (no nesting limit:
    walked without recursion); one of litellm's objects by its fields."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None:
            continue
        if isinstance(item, str):
            total += _text(item)
        elif isinstance(item, bool):
            total += 4
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 1  # its digits, without writing them out
        elif isinstance(item, float):
            total += 8
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                total += _text(str(key))
                stack.append(inner)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif callable(dump := getattr(item, "model_dump", None)):
            stack.append(dump(exclude_none=True))
        else:
            total += len(str(item))
    return total

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

Chunks come from either reader: the direct reader's (gateway/upstream/chunks.py: fields it does
not know in `extra`) and litellm's (pydantic objects: undeclared fields in
`__pydantic_extra__`); both are read by attribute here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.upstream.chunks import Chunk

# A chunk's frame counted free: an honest one (an id, a role, a fingerprint, a usage) is well
# under this; a hostile one counts past it.
FRAME_BYTES = 256

# litellm's delta keeps these among its undeclared fields; each is read on its own below.
_DELTA_READ = frozenset({"content", "role", "tool_calls", "reasoning_content", "reasoning"})
_DELTA_PAYLOAD = (
    "function_call", "thinking_blocks", "reasoning_items", "provider_specific_fields", "audio",
    "images", "annotations",
)  # fmt: skip


def relayed_bytes(chunk: Chunk) -> int:
    """The bytes of *chunk* that count against the answer's limit."""
    frame = _text(chunk.id) + _extra(chunk)
    frame += _bytes(getattr(chunk, "system_fingerprint", None))
    frame += _bytes(getattr(chunk, "provider_specific_fields", None))
    payload = 0
    for choice in chunk.choices:
        payload += _bytes(choice.logprobs)
        delta = choice.delta
        frame += _text(delta.role)
        payload += _text(delta.content)
        payload += _text(delta.reasoning_content)
        for name in _DELTA_PAYLOAD:
            payload += _bytes(getattr(delta, name, None))
        payload += _extra(delta, skip=_DELTA_READ.union(_DELTA_PAYLOAD))
        for part in delta.tool_calls or ():
            frame += _text(part.type)
            payload += _text(part.id)
            payload += _text(part.function.name)
            payload += _text(part.function.arguments)
    usage = chunk.usage
    if usage is not None:
        frame += _bytes(usage)
    return payload + max(0, frame - FRAME_BYTES)


def _extra(obj: Any, skip: frozenset[str] = frozenset()) -> int:
    """The fields a provider added that neither reader declares: the direct reader's `extra`,
    litellm's `__pydantic_extra__` (less what litellm itself keeps there, read apart)."""
    total = 0
    for found in (getattr(obj, "extra", None), getattr(obj, "__pydantic_extra__", None)):
        if isinstance(found, Mapping):
            total += sum(_text(str(k)) + _bytes(v) for k, v in found.items() if k not in skip)
    return total


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

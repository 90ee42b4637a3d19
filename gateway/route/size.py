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

# A chunk's frame counted free: an honest one (an id, a role, a fingerprint, a usage) is well
# under this; a hostile one counts past it.
FRAME_BYTES = 256

_LITELLM: Any = object()  # a chunk without the direct reader's `extra`: litellm's own

# litellm's delta: its fields beyond text, reasoning, role and tool calls (some declared, some
# kept among its undeclared ones), each counted whole; the rest of the undeclared are the
# provider's own.
_DELTA_PAYLOAD = (
    "function_call", "thinking_blocks", "reasoning_items", "provider_specific_fields", "audio",
    "images", "annotations",
)  # fmt: skip
_DELTA_SKIP = frozenset(
    {"content", "role", "tool_calls", "reasoning_content", "reasoning", *_DELTA_PAYLOAD}
)


def relayed_bytes(chunk: Any) -> int:
    """The bytes of *chunk* that count against the answer's limit."""
    own = getattr(chunk, "extra", _LITELLM)  # the direct reader's chunk keeps its others here
    frame = _text(chunk.id) if isinstance(getattr(chunk, "id", None), str) else 0
    if own is _LITELLM:
        frame += _extra(getattr(chunk, "__pydantic_extra__", None))
        frame += _bytes(getattr(chunk, "system_fingerprint", None))
        frame += _bytes(getattr(chunk, "provider_specific_fields", None))
    elif own:
        frame += _extra(own)
    payload = 0
    for choice in getattr(chunk, "choices", None) or ():
        payload += _bytes(getattr(choice, "logprobs", None))
        delta = choice.delta
        if own is _LITELLM:  # litellm's delta drops the attributes a chunk does not carry
            frame += _text(getattr(delta, "role", None))
            for name in ("content", "reasoning_content", *_DELTA_PAYLOAD):
                payload += _text(getattr(delta, name, None))
            payload += _extra(getattr(delta, "__pydantic_extra__", None), skip=_DELTA_SKIP)
        else:
            frame += _text(delta.role)
            payload += _text(delta.content) + _text(delta.reasoning_content)
            for value in (delta.function_call, delta.thinking_blocks, delta.extra):
                if value is not None:
                    payload += _bytes(value)
        for part in getattr(delta, "tool_calls", None) or ():
            frame += _text(getattr(part, "type", None))
            payload += _text(getattr(part, "id", None))
            function = getattr(part, "function", None)
            payload += _text(getattr(function, "name", None))
            payload += _text(getattr(function, "arguments", None))
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        frame += _bytes(usage)
    return payload + max(0, frame - FRAME_BYTES)


def _extra(found: Any, skip: frozenset[str] = frozenset()) -> int:
    """Fields a provider added that neither reader declares: the direct reader's `extra`,
    litellm's `__pydantic_extra__` (less what litellm itself keeps there, read apart)."""
    total = 0
    if isinstance(found, Mapping):
        for key, value in found.items():
            if key not in skip:
                total += _text(str(key)) + _text(value)
    return total


def _text(value: Any) -> int:
    if value is None:
        return 0
    if value.__class__ is not str:
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

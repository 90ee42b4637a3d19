"""A continued answer's usage: every call that made it, not only the one that finished it.

Why: a stream continued on the next member (gateway/route/continuation.py) is one answer made by
two calls or more, each with its own prompt and its own completion, and each billed. The usage
the last call reports counts only itself, so an agent (or its budget) that reads `usage` would
be told a fraction of what the answer cost. The calls that broke off first reported nothing
(usage comes at a stream's end); theirs is the gateway's own estimate from what each was sent
and what it said (routing's `estimate_tokens`, as count_tokens answers), unless one did report.
"""

from __future__ import annotations

from typing import Any

from routing import content_text, estimate_tokens


def broken_call(
    reported: Any, messages: list[dict[str, Any]], sent: str, began_at: int
) -> tuple[int, int]:
    """(prompt, completion) tokens of a call that broke off: its *reported* usage if it
    reported one, else the estimate: it was sent *messages* and the text it went on from
    (*sent*'s first *began_at* characters), and said the rest of *sent*."""
    if reported is not None:
        return _count(reported, "prompt_tokens"), _count(reported, "completion_tokens")
    asked = sum(len(content_text(m.get("content"))) for m in messages) + began_at
    return estimate_tokens(asked), estimate_tokens(len(sent) - began_at)


def add_earlier(usage: Any, earlier: list[tuple[int, int]]) -> None:
    """Add the *earlier* calls' (prompt, completion) tokens to the last call's *usage*, in
    place: the object every format reads its usage from."""
    prompt = _count(usage, "prompt_tokens") + sum(p for p, _ in earlier)
    completion = _count(usage, "completion_tokens") + sum(c for _, c in earlier)
    usage.prompt_tokens, usage.completion_tokens = prompt, completion
    usage.total_tokens = prompt + completion


def _count(usage: Any, name: str) -> int:
    value = getattr(usage, name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

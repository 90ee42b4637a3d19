"""Token counts as an upstream reports them (`usage`), read in one place.

Why: `usage` is whatever an upstream sends. A string there made a panel's sum of its seats'
tokens raise (a 500 for every seat's answer), a list or a number past 2**63 made the seat's
record unwritable (SQLite's and PostgreSQL's integers stop there), and a route turn's plain
reply failed the same way. So every count the gateway sums, records or relays is read here: a
whole number from 0 to `MOST_TOKENS`; anything else is unknown (0), and a warning names the
model and the field, so the seat is still answered and recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger("bench.upstream")

# Far past any context window or answer; a month of calls at this many still sums within a
# 64-bit integer (the records' SUMs).
MOST_TOKENS = 1_000_000_000

COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")

# what a usage never is: a value where an object of counts belongs
_NOT_A_USAGE = (str, bytes, bool, int, float, list, tuple)


def count(value: Any, field: str = "tokens", model: str = "") -> int:
    """*value* as a token count; 0 for none, and for anything that is not one (said in the
    log: a string, a list, a bool, a negative or fractional number, one past MOST_TOKENS)."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MOST_TOKENS:
        return value
    _not_a_count(model, field, value)
    return 0


def field_of(usage: Any, name: str) -> Any:
    """A usage's field, whether it came as a mapping (the wire) or an object (litellm's)."""
    if isinstance(usage, Mapping):
        return usage.get(name)
    return getattr(usage, name, None)


def counts(usage: Any, model: str = "") -> tuple[int, int]:
    """(prompt, completion) tokens of *usage*; (0, 0) when it is missing or not a usage."""
    if usage is None:
        return 0, 0
    if isinstance(usage, _NOT_A_USAGE):
        _not_a_count(model, "usage", usage)
        return 0, 0
    prompt = count(field_of(usage, "prompt_tokens"), "prompt_tokens", model)
    completion = count(field_of(usage, "completion_tokens"), "completion_tokens", model)
    return prompt, completion


def usage_view(usage: Any, model: str = "") -> dict[str, int] | None:
    """*usage* as a reply carries it: its three counts read here (the total, when none is
    stated or it is not a count, their sum); None when there is none."""
    if usage is None:
        return None
    prompt, completion = counts(usage, model)
    total = prompt + completion
    stated = None if isinstance(usage, _NOT_A_USAGE) else field_of(usage, "total_tokens")
    if stated is not None and (counted := count(stated, "total_tokens", model)) == stated:
        total = counted
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def _not_a_count(model: str, field: str, value: Any) -> None:
    if isinstance(value, int) and value.bit_length() > 128:  # its repr may even be refused
        shown = f"a number of {value.bit_length()} bits"
    else:
        shown = repr(value[:60] if isinstance(value, (str, bytes, list, tuple)) else value)
    shown = shown if len(shown) <= 60 else f"{shown[:57]}..."
    log.warning(
        "%s reported %s = %s, which is not a token count: taken as unknown (0)",
        model or "an upstream", field, shown,
    )  # fmt: skip

"""Rate-limit header values a provider states: durations (`2m59.56s`), whole numbers, and the
IETF draft's `RateLimit` fields in their three generations. Pure parsing, read by
quota_signals.py."""

from __future__ import annotations

import re
from dataclasses import dataclass

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)", re.IGNORECASE)
NUMBER = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*$")


def duration(text: str) -> float | None:
    """`45s`, `2m59.56s`, `1h`, `500ms`, `1h2m`, or plain seconds; None if unreadable."""
    text = text.strip()
    if NUMBER.match(text):
        return max(0.0, float(text))
    parts = _DURATION.findall(text)
    if not parts or _DURATION.sub("", text).strip():
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(value) * scale[unit.lower()] for value, unit in parts)


def whole(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(float(value.strip()))
    except ValueError:
        return None


@dataclass(frozen=True)
class Ietf:
    name: str = "ratelimit"
    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    window: float | None = None


def ietf_fields(h: dict[str, str]) -> Ietf:
    """The IETF draft's headers, in their three generations (separate fields, `limit=, remaining=,
    reset=`, and named policies `"p";r=0;t=30`). Of several policies, the one spent or closest."""
    window = None
    policy = h.get("ratelimit-policy")
    if policy:
        windows = [float(w) for w in re.findall(r"\bw=(\d+(?:\.\d+)?)", policy)]
        window = max(windows) if windows else None
    if "ratelimit" in h:
        best: Ietf | None = None
        for item in _items(h["ratelimit"]):
            found = Ietf(
                "ratelimit",
                whole(item.get("limit", item.get("q"))),
                whole(item.get("remaining", item.get("r"))),
                _duration(item.get("reset", item.get("t"))),
                window,
            )
            if best is None or _tighter(found, best):
                best = found
        if best is not None:
            return best
    reset = h.get("ratelimit-reset")
    return Ietf(
        "ratelimit-reset",
        whole(h.get("ratelimit-limit")),
        whole(h.get("ratelimit-remaining")),
        _duration(reset),
        window,
    )


def _duration(value: str | None) -> float | None:
    return None if value is None else duration(value)


def _items(value: str) -> list[dict[str, str]]:
    """`limit=10, remaining=0, reset=30` is one item; `"a";r=0;t=3, "b";r=5;t=60` is two."""
    if ";" not in value:
        return [_params(value.split(","))]
    return [_params(part.split(";")) for part in value.split(",")]


def _params(parts: list[str]) -> dict[str, str]:
    found = {}
    for part in parts:
        key, _, value = part.strip().partition("=")
        if value:
            found[key.strip().lower()] = value.strip().strip('"')
    return found


def _tighter(a: Ietf, b: Ietf) -> bool:
    if (a.remaining == 0) != (b.remaining == 0):
        return a.remaining == 0
    if a.remaining == 0:
        return (a.reset or 0) > (b.reset or 0)
    return (a.remaining if a.remaining is not None else 1 << 30) < (
        b.remaining if b.remaining is not None else 1 << 30
    )

"""A panel seat's answer: the one value every way out hands back for a seat's call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Answer:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    first_token_s: float | None = None
    finish_reason: str | None = None
    # the provider's response headers, lower-cased: its rate-limit headers are read from them
    headers: Mapping[str, str] = field(default_factory=dict)

"""What the records say about each model, frozen at the moment a panel is chosen.

The gateway keeps the live figures; routing only ever sees a snapshot, so choosing a panel is
a pure function of (ask, catalog, evidence, now).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

_EMPTY: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class Standing:
    """One model's record: when it last sat, how often, its verdicts per shape, its cooldown,
    and the context window its provider turned out to have."""

    last_seated: float | None = None
    seated: int = 0
    useful: Mapping[str, int] = field(default_factory=lambda: _EMPTY)  # shape -> useful verdicts
    judged: Mapping[str, int] = field(default_factory=lambda: _EMPTY)  # shape -> all verdicts
    cooling_until: float | None = None
    window: int | None = None  # context window learned from the provider, if lower than said

    def useful_on(self, shape: str) -> int:
        return self.useful.get(shape, 0)

    def ratio_on(self, shape: str) -> float:
        judged = self.judged.get(shape, 0)
        return self.useful.get(shape, 0) / judged if judged else 0.0

    def cooling(self, now: float) -> bool:
        return self.cooling_until is not None and self.cooling_until > now


NEVER = Standing()


@dataclass(frozen=True)
class Evidence:
    standings: Mapping[str, Standing] = field(default_factory=lambda: _EMPTY)

    def of(self, alias: str) -> Standing:
        return self.standings.get(alias, NEVER)

"""What the records say about each model, frozen at the moment a panel is chosen.

The gateway keeps the live figures; routing only ever sees a snapshot, so choosing a panel is
a pure function of (ask, catalog, evidence, now).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

_NO_COUNTS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class Standing:
    """One model's record: when it last sat, how often, its verdicts per shape, its cooldown,
    and the context window its provider turned out to have."""

    last_seated: float | None = None
    seated: int = 0
    useful: Mapping[str, int] = field(default_factory=lambda: _NO_COUNTS)  # shape -> useful ones
    judged: Mapping[str, int] = field(default_factory=lambda: _NO_COUNTS)  # shape -> all verdicts
    cooling_until: float | None = None
    window: int | None = None  # context window learned from the provider, if lower than said
    scarce: bool = False  # few requests remain, said its provider: explorers go elsewhere first

    def useful_on(self, shape: str) -> int:
        return self.useful.get(shape, 0)

    def ratio_on(self, shape: str) -> float:
        judged = self.judged.get(shape, 0)
        return self.useful.get(shape, 0) / judged if judged else 0.0

    def cooling(self, now: float) -> bool:
        return self.cooling_left(now) > 0

    def cooling_left(self, now: float) -> float:
        """Seconds of cooldown still to run at `now`; 0 when not cooling."""
        return max(0.0, self.cooling_until - now) if self.cooling_until is not None else 0.0


NEVER = Standing()
_NO_STANDINGS: Mapping[str, Standing] = MappingProxyType({})


@dataclass(frozen=True)
class Evidence:
    standings: Mapping[str, Standing] = field(default_factory=lambda: _NO_STANDINGS)

    def of(self, alias: str) -> Standing:
        return self.standings.get(alias, NEVER)

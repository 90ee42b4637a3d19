"""The live figures routing reads: when each model last sat, how it did, what verdicts it earned.

Loaded from the records at start-up, then kept current in memory as panels are seated, seats
finish and verdicts arrive, so choosing a panel never reads the store. Seating is marked in the
same event-loop step that chose the panel, which is what makes concurrent panels rotate.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from routing import Evidence, Standing


@dataclass
class _Figures:
    last_seated: float | None = None
    seated: int = 0
    answered: int = 0
    useful: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    judged: dict[str, int] = field(default_factory=lambda: defaultdict(int))


class Ledger:
    def __init__(self) -> None:
        self._figures: dict[str, _Figures] = defaultdict(_Figures)
        self._latest = float("-inf")
        self.windows: dict[str, int] = {}  # context windows learned from providers

    def load(self, standings: dict[str, Any]) -> None:
        for row in standings.get("seats", ()):
            figures = self._figures[row["alias"]]
            figures.seated = row["seated"] or 0
            figures.answered = row["answered"] or 0
            figures.last_seated = row["last_seated"]
            if row["last_seated"] is not None:
                self._latest = max(self._latest, row["last_seated"])
        for row in standings.get("verdicts", ()):
            figures = self._figures[row["alias"]]
            figures.useful[row["shape"]] += row["useful"] or 0
            figures.judged[row["shape"]] += row["judged"] or 0

    def seated(self, alias: str, now: float) -> float:
        """Mark a model seated; times are made strictly increasing so the order of seating is kept
        even when the clock has not moved between two panels."""
        at = max(now, self._latest + 1e-6)
        self._latest = at
        figures = self._figures[alias]
        figures.last_seated = at
        figures.seated += 1
        return at

    def learn_window(self, alias: str, window: int) -> bool:
        """Remember a provider's stated context window; it only ever goes down."""
        known = self.windows.get(alias)
        if known is not None and known <= window:
            return False
        self.windows[alias] = window
        return True

    def useful_on(self, alias: str, shape: str) -> int:
        figures = self._figures.get(alias)
        return figures.useful.get(shape, 0) if figures else 0

    def answered(self, alias: str) -> None:
        self._figures[alias].answered += 1

    def verdict(self, alias: str, shape: str, useful: bool, previous: bool | None) -> None:
        """Count a verdict, replacing the call's previous one (None: it had none)."""
        figures = self._figures[alias]
        if previous is None:
            figures.judged[shape] += 1
        elif previous:
            figures.useful[shape] -= 1
        if useful:
            figures.useful[shape] += 1

    def evidence(self, cooling: dict[str, float]) -> Evidence:
        standings = {
            alias: Standing(
                last_seated=f.last_seated,
                seated=f.seated,
                useful=MappingProxyType(dict(f.useful)),
                judged=MappingProxyType(dict(f.judged)),
                cooling_until=cooling.get(alias),
                window=self.windows.get(alias),
            )
            for alias, f in self._figures.items()
        }
        for alias in cooling.keys() | self.windows.keys():
            standings.setdefault(
                alias, Standing(cooling_until=cooling.get(alias), window=self.windows.get(alias))
            )
        return Evidence(MappingProxyType(standings))

    def row(self, alias: str) -> dict[str, Any]:
        f = self._figures.get(alias) or _Figures()
        return {
            "seated": f.seated,
            "answered": f.answered,
            "useful": sum(f.useful.values()),
            "judged": sum(f.judged.values()),
            "last_seated": f.last_seated,
        }

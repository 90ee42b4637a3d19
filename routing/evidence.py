"""What the records say about each model, frozen at the moment a panel is chosen.

The gateway keeps the live figures; routing only ever sees a snapshot, so choosing a panel is
a pure function of (ask, catalog, evidence, now).

Two habits keep the verdicts honest. A model is ranked by a *lower confidence bound* of its useful
rate (Wilson's score interval), not the raw ratio or the count: one lucky verdict does not make a
primary, and a model seated often does not win merely by having been asked more. And the rate
routing reads is the *recent* one: each verdict on a model weighs a little less than the one after
it (`MEMORY` verdicts make up most of the weight), so a model that turns bad loses its chair within
a few dozen verdicts instead of living off a long good record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from routing.prior import PRIOR_WEIGHT, SuiteScore, pseudo_verdicts, with_prior

_NO_COUNTS: Mapping[str, int] = MappingProxyType({})
_NO_WEIGHTS: Mapping[str, tuple[float, float]] = MappingProxyType({})

MEMORY = 50  # verdicts: the weight of the recent figures levels off at this many
DECAY = 1 - 1 / MEMORY  # each older verdict keeps this share of its weight
Z = 1.0  # one-sided 84 %: sure enough to rank by, loose enough to let a newcomer through


def wilson(useful: float, judged: float, z: float = Z) -> tuple[float, float]:
    """Wilson's score interval of the useful rate: (lower, upper); (0, 1) with no verdicts."""
    if judged <= 0:
        return (0.0, 1.0)
    p = min(max(useful / judged, 0.0), 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * judged)) / (1 + z2 / judged)
    spread = z * math.sqrt(p * (1 - p) / judged + z2 / (4 * judged * judged)) / (1 + z2 / judged)
    low = 0.0 if p == 0 else max(0.0, centre - spread)
    high = 1.0 if p == 1 else min(1.0, centre + spread)
    return (low, high)


def recent_after(figures: tuple[float, float], useful: bool) -> tuple[float, float]:
    """The recent (useful, judged) weights after one more verdict."""
    return (figures[0] * DECAY + (1.0 if useful else 0.0), figures[1] * DECAY + 1.0)


def recent_from_totals(useful: int, judged: int) -> tuple[float, float]:
    """Recent weights when only totals are known (a restart): the all-time rate at no more than
    the weight the recent figures level off at."""
    scale = min(1.0, MEMORY / judged) if judged else 0.0
    return (useful * scale, judged * scale)


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
    # shape -> (useful, judged), each verdict weighing DECAY times the next; totals when absent
    recent: Mapping[str, tuple[float, float]] = field(default_factory=lambda: _NO_WEIGHTS)
    scarce: bool = False  # few requests remain, said its provider: explorers go elsewhere first
    # benched before its trial, or retired (contract §18): why it is not called; None: callable
    unwell: str | None = None
    # its provider's listing lacks it (contract §19): seated as a member, never as an explorer
    unlisted: bool = False

    def useful_on(self, shape: str) -> int:
        return self.useful.get(shape, 0)

    def ratio_on(self, shape: str) -> float:
        judged = self.judged.get(shape, 0)
        return self.useful.get(shape, 0) / judged if judged else 0.0

    def judged_on(self, shape: str) -> int:
        return self.judged.get(shape, 0)

    def bounds_on(self, shape: str) -> tuple[float, float]:
        """Wilson's interval of the recent useful rate on *shape*."""
        return wilson(*self.recent_on(shape))

    def recent_on(self, shape: str) -> tuple[float, float]:
        """The recent (useful, judged) weights on *shape*; the totals when none are kept."""
        return self.recent.get(shape, (float(self.useful_on(shape)), float(self.judged_on(shape))))

    def cooling(self, now: float) -> bool:
        return self.cooling_left(now) > 0

    def cooling_left(self, now: float) -> float:
        """Seconds of cooldown still to run at `now`; 0 when not cooling."""
        return max(0.0, self.cooling_until - now) if self.cooling_until is not None else 0.0


NEVER = Standing()
_NO_STANDINGS: Mapping[str, Standing] = MappingProxyType({})
_NO_SUITE: Mapping[str, Mapping[str, SuiteScore]] = MappingProxyType({})


@dataclass(frozen=True)
class Evidence:
    """Every model's standing, and its suite score per shape (alias -> shape -> (accuracy,
    answered)) counted as `prior_weight` pseudo-verdicts in the interval routing ranks by
    (routing/prior.py). No suite scores: the verdicts alone, as before the suite."""

    standings: Mapping[str, Standing] = field(default_factory=lambda: _NO_STANDINGS)
    suite: Mapping[str, Mapping[str, SuiteScore]] = field(default_factory=lambda: _NO_SUITE)
    prior_weight: float = PRIOR_WEIGHT

    def of(self, alias: str) -> Standing:
        return self.standings.get(alias, NEVER)

    def score_on(self, alias: str, shape: str) -> SuiteScore | None:
        return self.suite.get(alias, {}).get(shape)

    def weights_on(self, alias: str, shape: str) -> tuple[float, float]:
        """(useful, judged): the model's recent verdicts on *shape* and its suite's prior."""
        score = self.score_on(alias, shape)
        return with_prior(self.of(alias).recent_on(shape), score, self.prior_weight)

    def bounds_on(self, alias: str, shape: str) -> tuple[float, float]:
        """Wilson's interval of the model's useful rate on *shape*, its suite prior counted."""
        return wilson(*self.weights_on(alias, shape))

    def suite_bound_on(self, alias: str, shape: str) -> float | None:
        """The lower bound of the model's suite accuracy on *shape* with every answer counted
        (not capped at the prior's weight): how two suite scores compare on equal terms, so
        8 of 8 ranks above 7 of 8 and 32 of 32 above 8 of 8. None without a score."""
        score = self.score_on(alias, shape)
        if score is None or score[1] <= 0:
            return None
        accuracy, answered = score
        return wilson(min(max(accuracy, 0.0), 1.0) * answered, float(answered))[0]

    def proven_on(self, alias: str, shape: str) -> bool:
        """Something says the model is useful on *shape*: a useful verdict or a suite score."""
        prior = pseudo_verdicts(self.score_on(alias, shape), self.prior_weight)
        return self.of(alias).useful_on(shape) > 0 or prior[0] > 0

    def known_on(self, alias: str, shape: str) -> bool:
        """The model has been judged on *shape*, or scored on it by the suite."""
        prior = pseudo_verdicts(self.score_on(alias, shape), self.prior_weight)
        return self.of(alias).judged_on(shape) > 0 or prior[1] > 0

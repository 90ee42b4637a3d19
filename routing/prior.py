"""The suite as a prior: a model's known-answer score counted as pseudo-verdicts.

Why: verdicts are scarce, so a model nobody has judged would otherwise be ranked as an unknown
(the interval (0, 1)) however well it does on the suite. Its suite accuracy on the shape counts
as `weight` verdicts, accuracy * weight of them useful, added to its real ones: with no verdicts
the suite ranks it, and as verdicts accrue they outweigh the fixed prior and take over.
"""

from __future__ import annotations

PRIOR_WEIGHT = 5.0  # pseudo-verdicts a suite score counts as (contract §20: suite.prior_weight)

# A model's suite figures on one shape: (accuracy, answered), as the gateway scores them.
SuiteScore = tuple[float, int]


def pseudo_verdicts(score: SuiteScore | None, weight: float) -> tuple[float, float]:
    """(useful, judged) pseudo-verdicts from a suite score: never more than the tasks answered,
    so two lucky answers do not count as five verdicts; none without a score."""
    if score is None:
        return (0.0, 0.0)
    accuracy, answered = score
    counted = min(max(weight, 0.0), float(max(answered, 0)))
    return (min(max(accuracy, 0.0), 1.0) * counted, counted)


def with_prior(
    verdicts: tuple[float, float], score: SuiteScore | None, weight: float
) -> tuple[float, float]:
    """(useful, judged) verdict weights with the suite's pseudo-verdicts added."""
    useful, judged = pseudo_verdicts(score, weight)
    return (verdicts[0] + useful, verdicts[1] + judged)


def standing_prior(score: SuiteScore | None, weight: float, judged: int) -> float:
    """Useful pseudo-verdicts for route mode, which ranks members by useful verdicts (a count,
    not a rate, so useless ones would never outweigh a fixed prior): each real verdict on the
    shape takes one pseudo-verdict's place, so the suite ranks an unjudged member and is gone
    once *judged* reaches the weight."""
    return pseudo_verdicts(score, max(0.0, weight - max(judged, 0)))[0]

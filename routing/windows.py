"""How big a prompt is and how big a model's window is: the two numbers a seat must fit.

Both are guesses that err on the safe side: a prompt is counted large (characters / 4 plus
10 %), and a model's window is the smaller of what the config says and what its provider has
shown it really takes (a context-window refusal naming its limit, learned).
"""

from __future__ import annotations

from routing.catalog import Model
from routing.evidence import Evidence


def window_of(model: Model, evidence: Evidence) -> int | None:
    """The configured window, or the smaller one the provider has shown it really has (None:
    not known, so any prompt is taken to fit)."""
    learned = evidence.of(model.alias).window
    said = model.context_window
    return min(w for w in (said, learned) if w is not None) if (said or learned) else None


def estimate_tokens(characters: int) -> int:
    """Characters / 4, plus 10 %: cheap, and errs on the large side."""
    return int(characters / 4 * 1.1)

"""What kind of failure a call's failure was, read from the provider's status and words.

Why classes and not the error's kind: a 404 can be a withdrawn slug (`gone`) or an account
setting (OpenRouter's "No endpoints found matching your data policy": `entitlement`), a 403 a
revoked key or a region; what the bench should do about a model (replace its seat now, bench it,
retire it, ask about the key) depends on which. The classes and the wording that makes each are
the contract's (§18), matched without regard to case; the order below settles a message that
matches two (a paywall's "no longer available for free" is not `gone`).

Pure: a function of the provider's HTTP status, its message, and the gateway's own kind for
what no status tells (a timeout, a refused connection, a broken stream, an empty answer).
gateway/state/learn.py classifies every call's outcome with it.
"""

from __future__ import annotations

import re
from enum import StrEnum


class FailureClass(StrEnum):
    """Why a call failed, as recorded (`failure`) and shown (`bench.seats[].failure`)."""

    REFUSED = "refused"  # the request's own fault (400/422): never the model's
    RATE_LIMITED = "rate_limited"  # 429 or a quota: a cooldown, never the model's fault
    CAPACITY = "capacity"  # 5xx, overloaded, a refused or reset connection, a broken stream
    TIMEOUT = "timeout"  # no answer within the seat's time
    EMPTY = "empty"  # an answer with no text and no tool call
    SIGNIN = "signin"  # the connection's key was refused
    ENTITLEMENT = "entitlement"  # the account's settings: credit, plan, region, data policy
    PAYWALLED = "paywalled"  # a free period that ended
    GONE = "gone"  # the model was withdrawn
    OTHER = "other"

    @property
    def takes_a_reserve(self) -> bool:
        """Does a panel hand the seat to its next reserve? Not for a refusal (the reserve would
        be asked the same) nor a timeout (the panel must not wait twice)."""
        return self not in (FailureClass.REFUSED, FailureClass.TIMEOUT)


def _words(*phrases: str) -> re.Pattern[str]:
    return re.compile("|".join(phrases), re.IGNORECASE)


_PAYWALLED = _words(
    r"free\b.{0,80}?\bperiod has ended",
    r"no longer available for free",
    r"migrate to the paid slug",
)
_ENTITLEMENT = _words(
    r"payment required",
    r"insufficient credit",
    r"not available in your (?:subscription|plan|region)",
    r"no endpoints found matching your data policy",
)
_SIGNIN = _words(r"\bkey\b", r"api[_-]?key", r"token", r"authenticat")
_GONE = _words(
    r"does not exist",
    r"model not found",
    r"unknown model",
    r"no endpoints found for",
    r"no longer (?:available|offered|supported)",
    r"has been (?:retired|deprecated|decommissioned)",
    r"end of life",
)
_OVERLOADED = _words(r"overloaded")

# The gateway's own kinds (gateway/errors.py's `kind`, a seat's status) that say it all.
_REFUSED_KINDS = ("refused", "context_window", "content_filter", "too_large")
_CAPACITY_KINDS = ("connection", "broken_stream")


def classify(status: int | None, message: str | None, kind: str | None = None) -> FailureClass:
    """The class of a failed call: the provider's HTTP *status* (None when it gave none, 200
    for an answer that was no answer), its *message*, and the gateway's *kind* of failure
    (`timeout`, `empty`, `connection`, `broken_stream`, `rate_limit`, `cooling`, `auth`,
    `refused`, `context_window`, `content_filter`, `notice`, ...)."""
    said = message or ""
    if kind == "timeout":
        return FailureClass.TIMEOUT
    if kind == "empty":
        return FailureClass.EMPTY
    if status == 429 or kind in ("rate_limit", "rate_limited", "cooling"):
        return FailureClass.RATE_LIMITED
    if _PAYWALLED.search(said):
        return FailureClass.PAYWALLED
    if status == 402 or _ENTITLEMENT.search(said):
        return FailureClass.ENTITLEMENT
    if status == 401 or (status == 403 and _SIGNIN.search(said)):
        return FailureClass.SIGNIN
    if kind == "auth" and status is None:
        return FailureClass.SIGNIN
    if status == 410 or (status in (None, 200, 404) and _GONE.search(said)):
        return FailureClass.GONE
    if status in (400, 413, 422) or kind in _REFUSED_KINDS:
        return FailureClass.REFUSED
    if (status or 0) >= 500 or kind in _CAPACITY_KINDS or _OVERLOADED.search(said):
        return FailureClass.CAPACITY
    if kind == "notice":  # a 200 that was a quota notice, not an answer (gateway/panel/notices.py)
        return FailureClass.RATE_LIMITED
    return FailureClass.OTHER

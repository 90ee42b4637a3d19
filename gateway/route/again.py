"""Asking the same member again, once, before a turn's first piece: the two faults worth it.

Failing over at once is the rule: the next member is ready, and any wait costs every agent turn
that meets it. Two faults are met better by the same member:

- a 429 on the member that holds the conversation, stating a short wait (at most
  `gateway.route_wait_s`, default 3 s, and never as long as the member would be waited for its
  first piece): a new model mid-task re-reads the whole context and may answer in another
  voice, which costs the agent more than a second or two. The wait is its cooldown's end (the
  stated wait, as the 429 cooled it); a longer one, a daily limit, or a 429 that states no wait
  fails over at once.
- one 500: most often a provider's one-off error, gone on the next request. Asked again after
  `RETRY_PAUSE_S`, once. A 503 (overloaded), a refused connection or a timeout are not: the
  next member at once.

Never after the turn's first piece (a break mid-answer is continued by the next member,
gateway/route/continuation.py), never twice for one member; asking again spends none of
`gateway.route_tries`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# The pause before a member that answered 500 is asked again.
RETRY_PAUSE_S = 0.25


class Failed(Protocol):
    """What a member's failure says (gateway/route/member.py's Failure)."""

    alias: str
    status: str
    kind: str
    http_status: int | None
    wait: float | None


@dataclass
class Again:
    """One turn's second chances: whose conversation it is, and who was asked again."""

    holder: str | None  # the member that holds (or is to hold) the conversation
    opening: bool = True  # no member has started answering yet
    asked: set[str] = field(default_factory=set)

    def pause(self, failure: Failed, route_wait_s: float, first_wait: float) -> float | None:
        """Seconds to wait before asking *failure*'s member again, or None: fail over."""
        if not self.opening or failure.alias in self.asked:
            return None
        if failure.status == "rate_limited":
            wait = failure.wait
            if failure.alias != self.holder or wait is None:
                return None
            if route_wait_s <= 0 or wait > route_wait_s or wait >= first_wait:
                return None
            return max(0.0, wait) + 0.05  # just past its cooldown's end
        if failure.kind == "upstream" and failure.http_status == 500:
            return RETRY_PAUSE_S
        return None

"""Provider notices: a 200 whose "answer" is really the provider talking about quota or payment.

Free tiers often answer a spent quota with a polite message in place of a completion. Passing
that off as a seat's opinion would be a lie, so a short answer that reads like such a notice is
an `error` seat (class `notice`), its text kept on the record.
"""

from __future__ import annotations

import re

MAX_NOTICE_CHARS = 600  # a real answer that merely mentions quotas is usually longer

_NOTICE = re.compile(
    r"(exceeded your (current )?quota|insufficient (credits?|balance|funds|quota)"
    r"|payment required|add (more )?credits|out of credits|credit balance is too low"
    r"|upgrade (your|to a) (plan|paid|account)|billing (details|issue|hard limit)"
    r"|free[- ]tier (limit|quota)|daily (limit|quota) (reached|exceeded)"
    r"|rate limit (reached|exceeded) for (free|this model))",
    re.IGNORECASE,
)


def provider_notice(text: str) -> str | None:
    """The matched phrase when `text` looks like a quota or payment notice, else None."""
    if len(text) > MAX_NOTICE_CHARS:
        return None
    found = _NOTICE.search(text)
    return found.group(0) if found else None

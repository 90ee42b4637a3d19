"""Why a panel cannot be chosen. The gateway turns each into an HTTP refusal."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name *name* most likely misspells (`reviewrs`: `reviewers`), or None. One
    measure for every did-you-mean, the config checker's and the refusals' alike."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str], shown: str = "{}") -> str:
    """`; did you mean X?` (X the closest known name, written as *shown* formats it), or ""."""
    found = closest(name, known)
    if found is None:
        return ""
    if found.lower() == name.lower():  # the one slip a reader may not see: say it
        return f"; did you mean {shown.format(found)} (names are case-sensitive)?"
    return f"; did you mean {shown.format(found)}?"


def echo(name: str, limit: int = 100) -> str:
    """A name from the request, cut to *limit* characters for a refusal message: a
    10,000-character model name is not worth sending back whole."""
    return name if len(name) <= limit else name[:limit] + "…"


class Refusal(Exception):
    """A request that seats nobody; `param` names the offending request field, if any."""

    param: str | None = None

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if param is not None:
            self.param = param


class UnknownCollection(Refusal):
    param = "model"


class UnknownShape(Refusal):
    param = "X-Panel-Shape"


class UnknownAlias(Refusal):
    param = "with"


class PromptTooLarge(Refusal):
    param = "messages"


class NothingToSeat(Refusal):
    pass

"""What a request carries that a model may or may not take (`Hints`), and how what could not be
taken is named to the client (`X-Bench-Dropped`) and on the record.

Agents send hint fields written for one provider (Anthropic's `thinking`, `context_management`,
Gemini's `topK`, OpenAI's `reasoning_effort`, ...). A turn must never fail for one, and nothing a
client asks for may vanish unnamed. So a format's reader splits them off: a hint that has an
equivalent in OpenAI chat's parameters is *offered* as that parameter (a `Hint`), and each call
passes it on only when the model's provider takes that parameter (litellm knows which:
gateway/upstream/params.py); whatever cannot be passed on, to this model or to any, is *dropped*
under the client's own name for it. Pure, so a format's body check may build one in the body
reader's child process (gateway/request/body.py).

A client's name may be anything JSON can spell (`"ключ"`, `"x\r\ny"`), and a header value is
Latin-1 without line breaks: such a name, sent as it is, failed the reply after the panel had
run. So the header percent-encodes, as a URL does in UTF-8, each character a header value
cannot carry or that would misread the list (controls, non-ASCII, `%` and `,`); every other
name is shown as it is. The record keeps the names as they came.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

HEADER = "X-Bench-Dropped"


@dataclass(frozen=True)
class Hint:
    """One chat parameter a request asks for through fields of its own format."""

    param: str  # the OpenAI chat parameter it becomes (reasoning_effort, top_k, ...)
    value: Any
    names: tuple[str, ...]  # the client's fields it came from, as X-Bench-Dropped names them


@dataclass(frozen=True)
class Hints:
    offered: tuple[Hint, ...] = ()
    dropped: tuple[str, ...] = ()  # what no model can be given (a hosted tool, a beta, ...)

    def offer(self, param: str, value: Any, *names: str) -> Hints:
        """These hints and one more; a second offer of *param* joins the first (its value kept:
        the reader offers the most specific field first)."""
        for i, hint in enumerate(self.offered):
            if hint.param == param:
                joined = Hint(param, hint.value, _unique(hint.names, names))
                return Hints((*self.offered[:i], joined, *self.offered[i + 1 :]), self.dropped)
        return Hints((*self.offered, Hint(param, value, names)), self.dropped)

    def drop(self, *names: str) -> Hints:
        return Hints(self.offered, _unique(self.dropped, names))

    def withdraw(self, param: str) -> Hints:
        """These hints with *param* no longer offered: its names are dropped instead."""
        names = [name for h in self.offered if h.param == param for name in h.names]
        kept = tuple(h for h in self.offered if h.param != param)
        return Hints(kept, _unique(self.dropped, names))

    def resolve(self, supported: Collection[str]) -> tuple[dict[str, Any], tuple[str, ...]]:
        """(the parameters a model taking *supported* is given, every name dropped for it)."""
        kept = {h.param: h.value for h in self.offered if h.param in supported}
        missed = (name for h in self.offered if h.param not in supported for name in h.names)
        return kept, _unique(self.dropped, missed)

    def __bool__(self) -> bool:
        return bool(self.offered or self.dropped)


NO_HINTS = Hints()


def joined(first: Hints, second: Hints) -> Hints:
    """Both sets of hints: the first's offers win where both offer one parameter."""
    found = first.drop(*second.dropped)
    for hint in second.offered:
        found = found.offer(hint.param, hint.value, *hint.names)
    return found


def header(dropped: Iterable[str]) -> dict[str, str]:
    """The `X-Bench-Dropped` header naming *dropped* (none when nothing was), each name as a
    header value may carry it (`header_name`)."""
    names = _unique((), dropped)
    return {HEADER: ", ".join(map(header_name, names))} if names else {}


# Printable ASCII but `%` (the escape itself) and `,` (between names): shown as they are.
_SHOWN = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "%,")


def header_name(name: str) -> str:
    """*name* with every other character percent-encoded in UTF-8 (`ключ` is
    `%D0%BA%D0%BB%D1%8E%D1%87`, `x\r\ny` is `x%0D%0Ay`): any client can decode it, and it
    is always a header value."""
    return quote(name, safe=_SHOWN)


def _unique(first: Iterable[str], more: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *more]))


# OpenAI chat's own hint fields: each passes on as itself where the model's provider takes it.
CHAT_HINTS = ("reasoning_effort", "parallel_tool_calls", "store", "metadata", "service_tier",
              "logprobs", "top_logprobs", "prompt_cache_key", "prompt_cache_retention",
              "safety_identifier", "verbosity", "top_k", "web_search_options", "modalities",
              "prediction")  # fmt: skip


def chat_hints(body: dict[str, Any], fields: Iterable[str] = CHAT_HINTS) -> Hints:
    """The hint fields of an OpenAI-shaped *body* (chat's own names), offered as themselves."""
    found = Hints()
    for field in fields:
        if body.get(field) is not None:
            found = found.offer(field, body[field], field)
    return found

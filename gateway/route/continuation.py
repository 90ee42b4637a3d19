"""A stream that broke after its first piece, continued on the next member.

Why: an agent that gets half an answer and an error starts the turn again at best, and takes
the half as the whole at worst. The text the client already has is given to the next member
to go on from: as an assistant prefill where its provider takes one (litellm's model map says
so, or the model's `model_info.supports_assistant_prefill`), the surest way, since the model
writes on from the last character; else as the same text followed by an instruction to
continue it exactly. A member that refuses the prefill (a 400) is told instead; its refusal
never reaches the client. Only what follows the text already sent is relayed (`Repeat`: a
model told to continue often starts over), so the client reads one answer.

A break inside a tool call is never continued: a call's arguments cannot be resumed by another
model with any certainty, and a truncated call run by an agent does damage, so that stays an
error in the stream.
"""

from __future__ import annotations

from typing import Any

from gateway.route.member import FORM, PREFILL

INSTRUCTION = (
    "Your reply above was cut off. Continue it exactly from the character where it stops: do "
    "not repeat any of it, do not comment, write only what comes next."
)


def forms(request: dict[str, Any], sent: str, prefill: bool) -> list[dict[str, Any]]:
    """The requests that continue *request* after *sent* (the text already relayed), in the
    order to try them: the prefill (when the member takes one), then the instruction. With
    nothing sent, the request itself (the next member answers it whole)."""
    if not sent:
        return [request]
    messages: list[dict[str, Any]] = request["messages"]
    told = [*_with_text(messages, sent, prefix=False), {"role": "user", "content": INSTRUCTION}]
    instruction = {**request, "messages": told}
    if not prefill:
        return [instruction]
    prefilled = {**request, "messages": _with_text(messages, sent, prefix=True), FORM: PREFILL}
    return [prefilled, instruction]


def _with_text(messages: list[dict[str, Any]], sent: str, *, prefix: bool) -> list[dict[str, Any]]:
    """*messages* ending with the assistant's *sent* text (joined to an assistant message that
    ends them already: the client's own prefill). `prefix` is litellm's mark of a prefill."""
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant" and isinstance(last.get("content"), str):
        ending = {**last, "content": last["content"] + sent}
        messages = messages[:-1]
    else:
        ending = {"role": "assistant", "content": sent}
    if prefix:
        ending["prefix"] = True
    else:
        ending.pop("prefix", None)
    return [*messages, ending]


class Repeat:
    """The continuing member's text as it comes, less a repeat of what was sent before it.

    Text that may still be the start of a repeat is held back (never more than the text sent);
    once it is the whole sent text, that is dropped, and once it differs, all of it is the
    continuation."""

    def __init__(self, sent: str) -> None:
        self.sent = sent
        self.held = ""
        self.settled = not sent

    def cut(self, text: str) -> str:
        """What of *text* to relay now."""
        if self.settled:
            return text
        self.held += text
        if self.held.startswith(self.sent):
            self.settled = True
            return self.held[len(self.sent) :]
        if self.sent.startswith(self.held):
            return ""  # still maybe a repeat: wait for more
        self.settled = True
        return self.held

    def rest(self) -> str:
        """At the end: the text still held (a continuation shorter than the text sent, which
        only began like it), relayed rather than lost."""
        if self.settled:
            return ""
        self.settled = True
        return self.held

"""Merged replies: after the panel, one model reads every seat's answer and writes one reply.

The merger's call is a record like any seat's (`<panel>.merger`), so verdicts apply to it too.
When it cannot be asked or fails, the reply falls back to every answer side by side with a
one-line note: a merge is a convenience, never a reason to lose the panel's answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.panel.fanout import Fanout, SeatResult, SeatStatus
from gateway.panel.reply import PanelFacts
from gateway.runtime import Runtime
from routing import Panel, Seat, conversation_text, estimate_tokens

INSTRUCTIONS = (
    "You are merging the answers of a panel of independent models to the conversation below. "
    "Write one answer for the user. Say where the seats agree, where they disagree, and who said "
    "what (name seats as given, e.g. member1). Do not invent claims no seat made."
)


@dataclass(frozen=True)
class Merge:
    result: SeatResult | None  # the merger's seat, when it was called
    note: str | None  # set when the reply fell back to every answer

    @property
    def answer(self) -> str | None:
        result = self.result
        if result is None or result.status != SeatStatus.OK or self.note is not None:
            return None
        return result.answer


def choose_merger(runtime: Runtime, facts: PanelFacts, seats: list[SeatResult]) -> str | None:
    """The collection's merger, else the answering seat with most useful verdicts on the shape,
    else the first member (or primary) that answered."""
    collection = runtime.config.catalog.collection(facts.collection)
    if collection is not None and collection.merger:
        return collection.merger
    answered = [r for r in seats if r.status == SeatStatus.OK]
    if not answered:
        return None
    useful = {r.alias: runtime.figures.useful_on(r.alias, facts.shape) for r in answered}
    best = max(answered, key=lambda r: useful[r.alias])
    if useful[best.alias] > 0:
        return best.alias
    return answered[0].alias


def merge_messages(
    messages: list[dict[str, Any]], seats: list[SeatResult], sampling: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The merger's conversation; a response_format the client asked for (it also goes to the
    merger's call) is named in the instructions, so the merged reply comes in it."""
    instructions = INSTRUCTIONS
    asked = (sampling or {}).get("response_format")
    if isinstance(asked, dict) and asked.get("type", "text") != "text":
        instructions += f" Reply in the requested response format ({asked['type']}) only."
    answers = "\n\n".join(
        f"### {r.seat} ({r.alias})\n{r.answer}" for r in seats if r.status == SeatStatus.OK
    )
    conversation = conversation_text(messages, roles=True)
    return [
        {"role": "system", "content": instructions},
        {
            "role": "user",
            "content": f"## Conversation\n{conversation}\n\n## The panel's answers\n{answers}",
        },
    ]


async def merge(
    runtime: Runtime,
    facts: PanelFacts,
    messages: list[dict[str, Any]],
    sampling: dict[str, Any],
    seats: list[SeatResult],
) -> Merge:
    alias = choose_merger(runtime, facts, seats)
    if alias is None:
        return Merge(None, "no seat answered, so there was nothing to merge")
    asked = merge_messages(messages, seats, sampling)
    model = runtime.config.catalog.model(alias)
    tokens = estimate_tokens(sum(len(m["content"]) for m in asked))
    if model is not None and model.context_window is not None and tokens > model.context_window:
        return Merge(
            None,
            f"merger {alias}'s context window ({model.context_window} tokens) cannot hold the "
            f"answers (~{tokens} tokens); every answer is shown instead",
        )
    plan = Panel(seats=(Seat("merger", alias),), reserves=())
    fanout = Fanout(runtime, facts.panel_id, facts.shape, plan, asked, sampling, counts=False)
    (result,) = await fanout.run()
    if result.status != SeatStatus.OK:
        return Merge(
            result,
            f"merger {alias} did not answer ({result.status}); every answer is shown instead",
        )
    return Merge(result, None)

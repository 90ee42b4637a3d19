"""What the Gemini CLI and google-genai send besides the conversation, read once for a panel and
for route mode alike: `generationConfig`'s hints, `safetySettings`, and the parts of earlier
turns that are Google's own.

- `topK` is offered as `top_k`, `thinkingConfig` (its `thinkingLevel`, or its `thinkingBudget`
  on the scale Anthropic's budgets are read on) as `reasoning_effort`: each given where the
  model's provider takes it, named in `X-Bench-Dropped` otherwise (gateway/request/hints.py). A
  budget of 0 asks for no thinking, what a request without one gets: honoured by leaving it out.
  `includeThoughts` is named: a member's thoughts are never sent back.
- Any other `generationConfig` field the gateway does not pass on is named, not refused; those
  that would change the reply's shape (`candidateCount`, `responseModalities`, ...) are still
  checked by the reader.
- `safetySettings` (Google's thresholds) are named when there are any; `[]` asks for nothing.
- A part's `thoughtSignature` (Google's token for its own model) and `thought: true` parts (a
  model's thoughts from an earlier turn, which the CLI itself never resends) are left out of
  what a member reads: they carry nothing a member can use, and ask for nothing.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import BadRequest
from gateway.request.bounds import whole
from gateway.request.hints import Hints

# generationConfig fields the reader passes on or checks (read.py); the rest are hints or named.
READ = frozenset({"temperature", "topP", "maxOutputTokens", "stopSequences", "seed",
                  "presencePenalty", "frequencyPenalty", "candidateCount", "responseMimeType",
                  "responseSchema", "responseJsonSchema", "responseModalities"})  # fmt: skip
_SIGNATURES = ("thoughtSignature", "thought_signature")
_LEVELS = {"MINIMAL": "minimal", "LOW": "low", "MEDIUM": "medium", "HIGH": "high"}


def config_hints(config: dict[str, Any]) -> tuple[dict[str, Any], Hints]:
    """(the generationConfig fields the reader reads, the hints in the rest); keys camelCase."""
    found = Hints()
    top_k = config.get("topK")
    if top_k is not None:
        if isinstance(top_k, bool) or not isinstance(top_k, int | float) or top_k < 0:
            raise BadRequest(
                "`generationConfig.topK` must be a number of at least 0.",
                param="generationConfig.topK",
            )
        found = found.offer("top_k", int(top_k), "topK")
    thinking = config.get("thinkingConfig")
    if thinking is not None:
        found = _thinking(thinking, found)
    unread = [name for name in config if name not in READ and name not in _OWN]
    found = found.drop(*(f"generationConfig.{name}" for name in unread))
    return {k: v for k, v in config.items() if k in READ}, found


_OWN = frozenset({"topK", "thinkingConfig"})


def _thinking(thinking: Any, found: Hints) -> Hints:
    where = "generationConfig.thinkingConfig"
    if not isinstance(thinking, dict):
        raise BadRequest(f"`{where}` must be an object.", param=where)
    config = {camel(k): v for k, v in thinking.items() if v is not None}
    if config.get("includeThoughts"):
        found = found.drop("thinkingConfig.includeThoughts")
    level, budget = config.get("thinkingLevel"), config.get("thinkingBudget")
    if level is not None:
        if not isinstance(level, str) or level.upper() not in _LEVELS:
            raise BadRequest(
                f"`{where}.thinkingLevel` must be one of {', '.join(_LEVELS)}.", param=where
            )
        return found.offer("reasoning_effort", _LEVELS[level.upper()], "thinkingConfig")
    if budget is not None:
        budget = whole(budget)  # 512.0 is a whole number, as JSON's integer has it
        if budget is None:
            raise BadRequest(f"`{where}.thinkingBudget` must be a whole number.", param=where)
        if budget == 0:
            return found
        effort = "medium" if budget < 0 else _effort_of_budget(budget)  # -1: dynamic
        return found.offer("reasoning_effort", effort, "thinkingConfig")
    return found


def _effort_of_budget(budget: int) -> str:
    return "low" if budget < 4096 else "medium" if budget < 16384 else "high"


def safety_hints(settings: Any, found: Hints) -> Hints:
    if settings is None or settings == []:
        return found
    if not isinstance(settings, list):
        raise BadRequest("`safetySettings` must be a list.", param="safetySettings")
    return found.drop("safetySettings")


def model_parts(parts: Any) -> Any:
    """The parts a member reads: `thought` parts left out, `thoughtSignature`s taken off."""
    if not isinstance(parts, list):
        return parts
    kept = []
    for part in parts:
        if isinstance(part, dict):
            part = {k: v for k, v in part.items() if k not in _SIGNATURES}
            if part.get("thought") is True:
                continue
            part.pop("thought", None)
        kept.append(part)
    return kept


def camel(name: str) -> str:
    """Google's JSON takes snake_case names too; one spelling is checked."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_keys(body: dict[str, Any]) -> dict[str, Any]:
    return {camel(k) if isinstance(k, str) else k: v for k, v in body.items()}

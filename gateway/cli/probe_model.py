"""The probe `models add` makes before it writes: a model asked twice, through the upstream seam.

A short prompt first: only a real answer counts (text; a bare 200 with none is `empty`), as a
health probe counts it (gateway/panel/probe.py). Then a prompt of about 6,000 tokens: a
provider that refuses it as over the model's window usually names the window, and that number
is worth keeping (`bench.context_window`), since the router skips a model for prompts larger
than its window; an answer says the window holds at least that much. A failure of the long
prompt for any other reason is said, and is no reason not to add the model.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from gateway.config.settings import Config
from gateway.errors import UpstreamContextWindow, UpstreamError
from gateway.request.failure import FailureClass, classify
from gateway.upstream.seam import UpstreamSeam

_WRAPPING = re.compile(r"\b(?:\w+(?:Error|Exception)(?::| -) )+")
SHORT = [{"role": "user", "content": "Reply with the single word: ready"}]
LONG_TOKENS = 6000
TIMEOUT_S = 60.0

# what each class of failure means to the person adding the model
MEANING = {
    FailureClass.REFUSED: "the provider refused the request",
    FailureClass.RATE_LIMITED: "rate limited; try again later",
    FailureClass.CAPACITY: "the provider is down, overloaded or not reachable",
    FailureClass.TIMEOUT: "no answer in time",
    FailureClass.EMPTY: "it answered with no text",
    FailureClass.SIGNIN: "the provider refused the key",
    FailureClass.ENTITLEMENT: "the account may not use it: credit, plan, region or data policy",
    FailureClass.PAYWALLED: "its free period has ended",
    FailureClass.GONE: "the provider does not serve it: check the name",
    FailureClass.OTHER: "the call failed",
}


def long_prompt(tokens: int = LONG_TOKENS) -> list[dict[str, str]]:
    """A prompt of about *tokens* tokens (4 characters each), ending in the short question."""
    line = "The bench keeps a note of every model it asks, so it seats the ones that help.\n"
    lines = [f"{n:>4}. {line}" for n in range(1, tokens * 4 // (len(line) + 6) + 1)]
    text = "Read these notes, then do as the last line says.\n\n" + "".join(lines)
    return [{"role": "user", "content": text + SHORT[0]["content"]}]


@dataclass
class Probe:
    failed: str | None = None  # why the short prompt got no answer, in a person's words
    answered_s: float = 0.0
    answer: str = ""
    window: int | None = None  # the context window a refusal named
    long_said: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        first = " ".join(self.answer.split())
        first = first if len(first) <= 60 else first[:57] + "..."
        return [f"probe: answered in {self.answered_s:.1f} s: {first!r}", *self.long_said]


def failure_words(exc: UpstreamError) -> str:
    """`class (what it means): the provider's message`, without the exception names litellm
    puts before it (`NotFoundError: NotFoundError: OpenAIException - `)."""
    found = classify(exc.status, exc.message, exc.kind)
    said = _WRAPPING.sub("", exc.message).strip() or exc.message
    return f"{found} ({MEANING[found]}): {said}"


async def probe_model(config: Config, alias: str) -> Probe:
    """Ask *alias* (as *config* has it, secrets resolved) the short prompt, then the long one."""
    params = config.litellm_params[alias]
    reader = config.reader(alias)
    timeout = min(config.gateway.seat_timeout_s or TIMEOUT_S, TIMEOUT_S)
    seam = UpstreamSeam()
    await seam.open([params["model"]], {params["model"]: reader})
    probe = Probe()
    try:
        started = time.monotonic()
        try:
            answer = await seam.call(params, SHORT, {}, timeout, reader=reader)
        except UpstreamError as exc:
            probe.failed = failure_words(exc)
            return probe
        probe.answered_s = time.monotonic() - started
        probe.answer = answer.text
        if not answer.text.strip():
            probe.failed = f"{FailureClass.EMPTY} ({MEANING[FailureClass.EMPTY]})"
            return probe
        await _long(seam, params, timeout, reader, probe)
    finally:
        await seam.close()
    return probe


async def _long(
    seam: UpstreamSeam, params: dict[str, object], timeout: float, reader: str, probe: Probe
) -> None:
    about = f"a prompt of about {LONG_TOKENS:,} tokens"
    try:
        answer = await seam.call(dict(params), long_prompt(), {}, timeout, reader=reader)
    except UpstreamContextWindow as exc:
        if exc.limit:
            probe.window = exc.limit
            probe.long_said.append(
                f"probe: {about} was refused: its context window is {exc.limit:,} tokens "
                f"(written as bench.context_window: {exc.limit})"
            )
        else:
            probe.long_said.append(
                f"probe: {about} was refused as over its window, which the provider did not "
                f"name: {exc.message}"
            )
        return
    except UpstreamError as exc:
        probe.long_said.append(
            f"probe: {about} failed, so its window is not known: {failure_words(exc)}"
        )
        return
    if answer.text.strip():
        probe.long_said.append(f"probe: {about} was answered: its window holds at least that")
    else:
        probe.long_said.append(f"probe: {about} got an answer with no text")

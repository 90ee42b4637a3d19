"""Asking a task and reading its answer, as contract §20 words both: pure functions.

The question is the task's code with its lines numbered (`   3 | code`), fenced in the task's
language, then the one instruction of its kind. The answer is read by its last line of the
asked form (any case, markdown emphasis allowed: `**FAULT: line 3**`, `Fault: Line 3.`); a
model that reasons aloud and then settles is read as it settled. No such line: no answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.suite.tasks import Task

ASK_FAULT = (
    "Is there a bug? End your answer with exactly one line: `FAULT: line N` "
    "(N the line of the bug) or `NO FAULT`."
)
ASK_VERDICT = "End your answer with exactly one line: `VERDICT: TRUE` or `VERDICT: FALSE`."

FOUND, WRONG_LINE, MISSED = "found", "wrong_line", "missed"
CLEAN, FALSE_ALARM = "clean", "false_alarm"
RIGHT, WRONG = "right", "wrong"

_FAULT = re.compile(r"^fault\s*:\s*(?:on\s+)?lines?\s*#?\s*(\d+)\b")
_NO_FAULT = re.compile(r"^no[\s_-]+fault\b")
_VERDICT = re.compile(r"^verdict\s*:\s*(true|false)\b")
_DECORATION = "*_`~#>-+ \t"


def numbered(code: str) -> str:
    return "\n".join(f"{n:>4} | {line}" for n, line in enumerate(code.splitlines(), 1))


def question(task: Task) -> str:
    """What the model is asked for *task*."""
    fence = f"```{task.language or ''}\n{numbered(task.code)}\n```"
    if task.kind == "claim":
        return f"{fence}\n\nClaim: {task.claim}\n\n{ASK_VERDICT}"
    return f"{fence}\n\n{ASK_FAULT}"


@dataclass(frozen=True)
class Said:
    """What an answer's last verdict line says: a fault on *line*, no fault, or true/false."""

    fault: int | None = None  # FAULT: line N
    no_fault: bool = False
    verdict: bool | None = None  # VERDICT: TRUE / FALSE


def read(answer: str | None, kind: str) -> Said | None:
    """The last line of the form *kind* asks for (FAULT/NO FAULT for bug and control, VERDICT
    for claim), or None when the answer has none."""
    for raw in reversed((answer or "").splitlines()):
        line = _plain(raw)
        if kind == "claim":
            if match := _VERDICT.match(line):
                return Said(verdict=match.group(1) == "true")
        elif match := _FAULT.match(line):
            return Said(fault=int(match.group(1)))
        elif _NO_FAULT.match(line):
            return Said(no_fault=True)
    return None


def _plain(line: str) -> str:
    """The line in lower case without markdown emphasis around it or a closing full stop."""
    text = line.strip().strip(_DECORATION).rstrip(".!").strip(_DECORATION).lower()
    return re.sub(r"[*_`]+", "", text).strip()


def score(task: Task, answer: str | None) -> str | None:
    """The outcome of *answer* on *task*: found, wrong_line or missed (bug); clean or
    false_alarm (control); right or wrong (claim); None when it gave no such line."""
    said = read(answer, task.kind)
    if said is None:
        return None
    if task.kind == "claim":
        return RIGHT if said.verdict == task.truth else WRONG
    if task.kind == "control":
        return CLEAN if said.no_fault else FALSE_ALARM
    if said.no_fault:
        return MISSED
    return FOUND if said.fault in task.lines else WRONG_LINE


def confidently_wrong(task: Task, outcome: str | None) -> bool:
    """A wrong line, a false alarm, or TRUE on a false claim."""
    if outcome in (WRONG_LINE, FALSE_ALARM):
        return True
    return task.kind == "claim" and outcome == WRONG and task.truth is False

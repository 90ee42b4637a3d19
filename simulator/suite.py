"""A simulated model answering the gateway's suite tasks with a hidden skill.

Why: the suite scores models on tasks whose answers are known, and the router ranks models by
that score. To show it offline (the demo, the tests, the benchmark) a simulated model needs a
true ability the suite can measure: with `suite_skill: p` it answers a task right with
probability p, and wrong the way models are wrong (a wrong line, a missed bug, a false alarm, the
flipped verdict). The draw is a hash of the model's name and the task's code, so the same model
answers the same task alike every time, however often or in whatever order it is asked.

The key is read from the task files themselves, as plain YAML by path (the simulator imports no
gateway code): the gateway's shipped folder beside this package, then `suite_dirs`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SHIPPED = Path(__file__).resolve().parent.parent / "gateway" / "suite" / "tasks"
FAULT_ASKED = "`FAULT: line N`"
VERDICT_ASKED = "`VERDICT: TRUE` or `VERDICT: FALSE`"
_FENCE = re.compile(r"```[^\n]*\n(.*?)\n?```", re.DOTALL)
_NUMBERED = re.compile(r"^ *\d+ \|(?: (.*))?$")


@dataclass(frozen=True)
class Task:
    kind: str
    code: str
    lines: tuple[int, ...] = ()
    claim: str = ""
    truth: bool = False


def check(dirs: Any) -> None:
    """Refuse a `suite_dirs` that is not a list of folder paths."""
    if dirs is not None and not all(isinstance(d, str) for d in dirs):
        raise ValueError(f"simulator behaviour key 'suite_dirs' must list folders, got {dirs!r}")


def answer(model: str, asked: str, skill: float, dirs: list[str] | None = None) -> str | None:
    """The answer of *model* with *skill* to a suite task asked in *asked* (the last user
    message); None when *asked* is not a suite task the simulator knows."""
    if FAULT_ASKED not in asked and VERDICT_ASKED not in asked:
        return None
    code = asked_code(asked)
    task = _find(code, asked, tuple(dirs or ())) if code is not None else None
    if task is None:
        return None
    draw = _draws(model, task.code)
    right = draw[0] < skill
    last = _verdict(task, right) if task.kind == "claim" else _fault(task, right, draw)
    return f"{_PREAMBLE[int(draw[3] * len(_PREAMBLE))]}\n\n{_dressed(last, draw[4])}"


def asked_code(asked: str) -> str | None:
    """The code of the first fenced block whose every line is numbered `   n | line`."""
    for block in _FENCE.findall(asked):
        rows = [_NUMBERED.match(line) for line in block.splitlines()]
        if rows and all(rows):
            return _plain("\n".join(row.group(1) or "" for row in rows if row))
    return None


def load(folder: Path) -> dict[str, Task]:
    """Task id -> task for each readable task file in *folder*; others are passed over."""
    tasks: dict[str, Task] = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            tasks[path.stem] = Task(
                kind=str(raw["kind"]),
                code=_plain(str(raw["code"])),
                lines=tuple(int(n) for n in raw.get("lines") or ()),
                claim=str(raw.get("claim") or ""),
                truth=raw.get("truth") is True,
            )
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError):
            continue
    return tasks


_LOADED: dict[tuple[str, ...], tuple[tuple[Any, ...], dict[str, Task]]] = {}


def _tasks(dirs: tuple[str, ...]) -> dict[str, Task]:
    """The shipped tasks, then each folder's (same id replaces), read again when a file changes."""
    folders = (SHIPPED, *(Path(d) for d in dirs))
    stamp = tuple(
        (p, p.stat().st_mtime_ns) for f in folders if f.is_dir() for p in sorted(f.glob("*.yaml"))
    )
    seen = _LOADED.get(dirs)
    if seen is None or seen[0] != stamp:
        merged: dict[str, Task] = {}
        for folder in folders:
            merged.update(load(folder))
        _LOADED[dirs] = seen = (stamp, merged)
    return seen[1]


def _find(code: str, asked: str, dirs: tuple[str, ...]) -> Task | None:
    """The task with this code; of several (claims on one code), the one whose claim was asked."""
    same = [t for t in _tasks(dirs).values() if t.code == code]
    return next((t for t in same if t.claim and t.claim in asked), same[0] if same else None)


def _plain(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip("\n").splitlines())


def _draws(model: str, code: str) -> tuple[float, ...]:
    """Five numbers in [0, 1) fixed by the model and the task."""
    digest = hashlib.sha256(f"{model}\0{code}".encode()).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "big") / 2**32 for i in range(0, 20, 4))


def _fault(task: Task, right: bool, draw: tuple[float, ...]) -> str:
    if task.kind == "bug" and right:
        return f"FAULT: line {task.lines[int(draw[1] * len(task.lines))]}"
    if task.kind != "bug" and right:
        return "NO FAULT"
    lines = task.code.splitlines()
    others = [n for n, text in enumerate(lines, 1) if text.strip() and n not in task.lines]
    if not others or (task.kind == "bug" and draw[2] < 0.5):
        return "NO FAULT"  # a bug missed (half the wrong answers), or nowhere else to point
    return f"FAULT: line {others[int(draw[1] * len(others))]}"


def _verdict(task: Task, right: bool) -> str:
    return f"VERDICT: {'TRUE' if task.truth == right else 'FALSE'}"


_PREAMBLE = (
    "I read the code line by line.",
    "Let me trace what this does with a few inputs.",
    "Looking at the boundaries and the types involved:",
    "Walking through it step by step.",
)


def _dressed(last: str, draw: float) -> str:
    """The answer line as models write it: plain, in bold, or in lower case."""
    return last if draw < 0.5 else f"**{last}**" if draw < 0.8 else last.lower()

"""The suite's tasks: one YAML file each, `<id>.yaml`, read from the shipped folder and then from
the user's `suite.dir`, where a task replaces a shipped one of the same id.

Why a bad file is skipped, not fatal: a user's suite folder grows by hand, and one typo must
not keep the gateway from starting; the file is named with its problem in the log at start
(and in `problems`, which GET /bench/suite does not hide)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("bench.suite")

SHIPPED = Path(__file__).with_name("tasks")
KINDS = ("bug", "control", "claim")
MAX_FILE_BYTES = 200_000


@dataclass(frozen=True)
class Task:
    id: str
    kind: str  # bug | control | claim
    shape: str
    code: str
    language: str | None = None
    lines: tuple[int, ...] = ()  # bug: the faulty line(s)
    claim: str | None = None  # claim only
    truth: bool | None = None  # claim only


@dataclass(frozen=True)
class Tasks:
    by_id: dict[str, Task]
    problems: tuple[str, ...] = ()  # "<file>: <what is wrong>", for each file skipped

    def __len__(self) -> int:
        return len(self.by_id)


class BadTask(ValueError):
    pass


def load(folder: Path | None = None, shipped: Path = SHIPPED) -> Tasks:
    """The shipped tasks, then *folder*'s (the same id replaces a shipped one)."""
    found: dict[str, Task] = {}
    problems: list[str] = []
    for where in (shipped, folder):
        if where is None:
            continue
        if not where.is_dir():
            problems.append(f"{where}: the suite folder does not exist")
            continue
        for path in sorted(where.glob("*.yaml")):
            try:
                found[path.stem] = read(path)
            except BadTask as exc:
                problems.append(f"{path}: {exc}")
    for problem in problems:
        log.warning("suite task skipped: %s", problem)
    return Tasks(found, tuple(problems))


def read(path: Path) -> Task:
    """The task in *path*, or BadTask saying what is wrong with it."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise BadTask(f"over {MAX_FILE_BYTES} bytes")
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadTask(f"cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise BadTask("is not UTF-8 text") from exc
    except yaml.YAMLError as exc:
        raise BadTask(f"is not valid YAML ({' '.join(str(exc).split())})") from exc
    return parse(path.stem, raw)


def parse(task_id: str, raw: Any) -> Task:
    """A task from its file's mapping, checked as the contract's format says."""
    if not isinstance(raw, dict):
        raise BadTask("is not a mapping of kind, code, ...")
    unknown = set(raw) - {"kind", "shape", "language", "code", "lines", "claim", "truth"}
    if unknown:
        raise BadTask(f"has unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise BadTask(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    code = raw.get("code")
    if not isinstance(code, str) or not code.strip():
        raise BadTask("code is missing or empty")
    shape = _text(raw, "shape") or "review"
    language = _text(raw, "language")
    lines = _lines(raw.get("lines"), kind, code)
    claim, truth = _claim(raw, kind)
    return Task(task_id, kind, shape, code, language, lines, claim, truth)


def _text(raw: dict[str, Any], name: str) -> str | None:
    value = raw.get(name)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise BadTask(f"{name} must be a word, not {value!r}")
    return value.strip() if isinstance(value, str) else None


def _lines(value: Any, kind: str, code: str) -> tuple[int, ...]:
    if kind != "bug":
        if value not in (None, []):
            raise BadTask(f"lines belong to a bug task, not a {kind}")
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    count = len(code.splitlines())
    if not isinstance(value, list) or not value:
        raise BadTask("a bug task needs lines: the faulty line number(s)")
    for line in value:
        if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= count:
            raise BadTask(f"line {line!r} is not a line of the code (1 to {count})")
    return tuple(value)


def _claim(raw: dict[str, Any], kind: str) -> tuple[str | None, bool | None]:
    claim, truth = raw.get("claim"), raw.get("truth")
    if kind != "claim":
        if claim is not None or truth is not None:
            raise BadTask(f"claim and truth belong to a claim task, not a {kind}")
        return None, None
    if not isinstance(claim, str) or not claim.strip():
        raise BadTask("a claim task needs claim: the statement to judge")
    if not isinstance(truth, bool):
        raise BadTask(f"truth must be true or false, not {truth!r}")
    return claim.strip(), truth

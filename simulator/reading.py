"""Answers read from the prompt (``reads_prompt``), and calls to the tool a prompt asks for
(``calls_offered_tools``): what lets the offline demo show what the product does.

Why: a simulated model that says one fixed sentence whatever it is asked hides the two things
the product adds. A panel's answers should differ the way real reviewers' do (each sees the
obvious point, then some of the others), so a merged reply has something to merge; and a route
mode member offered a tool the question needs should call it. Everything here is deterministic
(the same model and prompt give the same answer), small, and no model: a few patterns a
reviewer would flag, each a point in a bulleted answer.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from routing.text import content_text

#: What a reviewer flags: (name, pattern, point). A point may cite the match as ``{0}``.
RULES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (name, re.compile(pattern, re.I), point)
    for name, pattern, point in (
        ("backoff", r"\bretr(?:y|ies|ied|ying)\b",
         "The retry never backs off: wait longer after each failure (exponential backoff with "
         "jitter) and cap the attempts."),
        ("unbounded",
         r"\bforever\b|\bloop\b|while\s+True\b|while\s*\(\s*(?:true|1)\s*\)|for\s*\(\s*;\s*;",
         "Nothing bounds the loop: give it a maximum number of attempts or a deadline."),
        ("broad", r"\bany error\b|except\s*(?:Exception|BaseException)?\s*:|catch\s*\(",
         "Every error is treated alike: a 401 or a 404 never succeeds on a retry; retry only "
         "timeouts, 429 and 5xx."),
        ("sleep", r"\bsleep\s*\(\s*\d",
         "The fixed `{0}` blocks and never grows: sleep asynchronously, and longer each time."),
        ("resource", r"\bopen\s*\(|\bconnect\s*\(|\bsocket\b|\bSession\s*\(",
         "What `{0}` opens is not closed on the error path: use a `with` block (or `finally`)."),
        ("secret", r"\b(?:password|secret|api_key|token)\s*=\s*[\"']",
         "A secret is written in the code (`{0}`): read it from the environment."),
        ("sql", r"[f%]?[\"'](?:SELECT|INSERT|UPDATE|DELETE)\b[^\"']*(?:\{|%s|\"\s*\+)",
         "The SQL is built from strings: pass the values as query parameters."),
        ("none", r"[!=]=\s*None\b", "Compare with None by identity (`is None`), not `{0}`."),
        ("mutable", r"def \w+\([^)]*=\s*(?:\[\]|\{\})",
         "A mutable default argument is shared between calls: default to None."),
        ("todo", r"\b(?:TODO|FIXME|XXX)\b", "A `{0}` is left in: finish it or file it."),
        ("cache", r"\bcache", "Check what the cache is keyed on: two callers may share a result."),
        ("magic", r"(?<![\w.])\d{2,}(?![\w.])", "Name the magic number {0} as a constant."),
        ("tests", r"\b(?:review|change|diff|safe|wrong|bug)\b",
         "Add a test for the failure path: nothing here shows it was exercised."),
    )
)  # fmt: skip
MERGE_HEAD = "## The panel's answers\n"  # the merger's prompt (gateway/panel/merger.py)
SECTION = re.compile(r"^### (\S+) \(([^)]+)\)\n(.*?)(?=^### |\Z)", re.M | re.S)
PLACE_WORDS = ("city", "location", "place", "town", "country")


def answer(model: str, messages: list[dict[str, Any]]) -> str | None:
    """*model*'s answer to the conversation: a merge when it is asked to merge a panel, else the
    points the last user message gives it; None when nothing in it gives a point."""
    prompt = _last_user(messages)
    if MERGE_HEAD in prompt:
        return merged(prompt.split(MERGE_HEAD, 1)[1])
    points = _points(prompt)
    if not points:
        return None
    first, rest = points[0], points[1:]
    seen = [p for p in rest if _draw(model, p) % 3 != 0]  # each sees about two thirds of the rest
    return "\n".join(["What I see:", *(f"- {p}" for p in [first, *seen])])


def merged(answers: str) -> str:
    """One answer from the panel's: the points every seat made, then who made the others."""
    said: dict[str, list[str]] = {}  # point -> seats that made it, in the panel's order
    seats = []
    for seat, alias, text in SECTION.findall(answers):
        name = f"{seat} ({alias})"
        seats.append(name)
        bullets = [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]
        for point in bullets or [text.strip()]:
            said.setdefault(point, []).append(name)
    if not seats:
        return "The panel gave no answers to merge."
    lines = [f"Merged from {len(seats)} answers ({', '.join(seats)})."]
    agreed = [p for p, who in said.items() if len(who) == len(seats)]
    if agreed and len(seats) > 1:
        lines += ["", "All of them agree:", *(f"- {p}" for p in agreed)]
    apart: dict[tuple[str, ...], list[str]] = {}  # who made them -> the points not all made
    for point, who in said.items():
        if point not in agreed or len(seats) == 1:
            apart.setdefault(tuple(who), []).append(point)
    for makers, points in apart.items():
        names = " and ".join([", ".join(makers[:-1]), makers[-1]] if len(makers) > 1 else makers)
        lines += ["", f"Only {names}:", *(f"- {p}" for p in points)]
    return "\n".join(lines)


def offered_call(tools: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """A call of the first offered tool whose every required argument is a place the prompt
    names ("Is it sunny in Oslo?" calls `weather(city="Oslo")`); None when no tool fits."""
    place = _place(_last_user(messages))
    for tool in tools if isinstance(tools, list) and place else ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = parameters.get("required") or list(properties)
        if required and all(_is_place(name, properties.get(name)) for name in required):
            return [{"name": function["name"], "arguments": dict.fromkeys(required, place)}]
    return None


def _is_place(name: str, schema: Any) -> bool:
    if not isinstance(schema, dict) or schema.get("type", "string") != "string":
        return False
    words = f"{name} {schema.get('description', '')}".lower()
    return any(word in words for word in PLACE_WORDS)


def _place(prompt: str) -> str | None:
    """The first capitalised word that does not start a sentence (a proper noun: "Oslo")."""
    found = re.search(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b", prompt.strip())
    return found.group(1) if found else None


def _points(prompt: str) -> list[str]:
    """The points the prompt's lines give, each rule once, in the order its lines raise them."""
    found: list[tuple[int, int, str]] = []
    for rank, (_name, pattern, point) in enumerate(RULES):
        hit = pattern.search(prompt)
        if hit:
            cited = hit.group(0).strip()[:40]
            # the generic point comes last, whatever its place in the prompt
            start = len(prompt) if rank == len(RULES) - 1 else hit.start()
            found.append((start, rank, point.format(cited)))
    return [point for _start, _rank, point in sorted(found)]


def _draw(model: str, point: str) -> int:
    """A number fixed by the model and the point: which of the points a model sees."""
    return int.from_bytes(hashlib.sha256(f"{model}\n{point}".encode()).digest()[:4], "big")


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""

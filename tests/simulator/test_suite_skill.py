"""The simulator's hidden suite skill: a simulated model asked a suite task (as the contract asks
it) answers right with its `suite_skill` probability, the same model and task always alike, and
wrong the way models are wrong. Asked over real HTTP on 127.0.0.1."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from simulator import suite, validate_behaviour

TASKS = Path(suite.SHIPPED)
FAULT = "Is there a bug? End your answer with exactly one line: `FAULT: line N` (N the line of the bug) or `NO FAULT`."  # noqa: E501
VERDICT = "End your answer with exactly one line: `VERDICT: TRUE` or `VERDICT: FALSE`."
HTTP = httpx.Client(timeout=30)  # one connection kept alive for the file's many asks
LAST = re.compile(r"^\W*(FAULT: line (\d+)|NO FAULT|VERDICT: (TRUE|FALSE))\W*$", re.IGNORECASE)


def shipped() -> dict[str, dict[str, Any]]:
    return {p.stem: yaml.safe_load(p.read_text()) for p in sorted(TASKS.glob("*.yaml"))}


def asking(task: dict[str, Any]) -> str:
    """The task as the contract asks it: numbered code in a fence, then the instruction."""
    numbered = "\n".join(f"{n:>4} | {line}" for n, line in enumerate(task["code"].splitlines(), 1))
    fenced = f"```{task.get('language', '')}\n{numbered}\n```"
    if task["kind"] == "claim":
        return f"{fenced}\n\nClaim: {task['claim']}\n\n{VERDICT}"
    return f"{fenced}\n\n{FAULT}"


def last_line(text: str) -> tuple[str, int | None]:
    """('fault', n), ('none', None), ('true'|'false', None) from the answer's last line."""
    match = LAST.match(text.strip().splitlines()[-1])
    assert match, f"no answer line in {text!r}"
    if match.group(2):
        return ("fault", int(match.group(2)))
    if match.group(3):
        return (match.group(3).lower(), None)
    return ("none", None)


def right(task: dict[str, Any], said: tuple[str, int | None]) -> bool:
    if task["kind"] == "bug":
        return said[0] == "fault" and said[1] in task["lines"]
    if task["kind"] == "control":
        return said == ("none", None)
    return said[0] == ("true" if task["truth"] else "false")


def ask(sim: Any, model: str, content: str) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": content}]}
    reply = HTTP.post(f"{sim.url}/v1/chat/completions", json=body)
    reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])


def test_a_model_of_full_skill_answers_every_shipped_task_right(sim):
    sim.set("sharp", suite_skill=1.0)
    for task_id, task in shipped().items():
        assert right(task, last_line(ask(sim, "sharp", asking(task)))), task_id


def test_a_model_of_no_skill_answers_every_task_wrong_in_the_ways_models_are_wrong(sim):
    sim.set("dull", suite_skill=0.0)
    seen = set()
    for task_id, task in shipped().items():
        said = last_line(ask(sim, "dull", asking(task)))
        assert not right(task, said), task_id
        lines = len(task["code"].splitlines())
        if said[0] == "fault":
            assert 1 <= said[1] <= lines and task["code"].splitlines()[said[1] - 1].strip()
        seen.add((task["kind"], said[0]))
    assert {("bug", "fault"), ("bug", "none"), ("control", "fault")} <= seen
    assert {("claim", "true"), ("claim", "false")} <= seen  # flipped both ways


def test_the_same_model_answers_the_same_task_alike_and_other_models_differ(sim):
    sim.set("*", suite_skill=0.5)
    tasks = list(shipped().values())
    first = [ask(sim, "steady", asking(t)) for t in tasks[:12]]
    again = [ask(sim, "steady", asking(t)) for t in reversed(tasks[:12])]
    assert first == list(reversed(again))
    other = [ask(sim, "other", asking(t)) for t in tasks[:12]]
    assert [last_line(a) for a in other] != [last_line(a) for a in first]


@pytest.mark.parametrize("skill", [0.2, 0.5, 0.8])
def test_over_many_models_the_share_answered_right_is_the_skill(skill):
    tasks = shipped()
    scores = [
        right(task, last_line(suite.answer(f"m{i}", asking(task), skill) or ""))
        for i in range(15)
        for task in tasks.values()
    ]
    assert abs(sum(scores) / len(scores) - skill) < 0.04


def test_a_task_in_a_folder_of_its_own_is_answered_and_replaces_a_shipped_one(sim, tmp_path):
    grade = shipped()["py-grade"]
    (tmp_path / "py-grade.yaml").write_text(yaml.safe_dump({**grade, "lines": [5]}))
    mine = {"kind": "bug", "language": "python", "code": "x = 1\ny = x / 0\n", "lines": [2]}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine))
    sim.set("sharp", suite_skill=1.0, suite_dirs=[str(tmp_path)])
    assert last_line(ask(sim, "sharp", asking(mine))) == ("fault", 2)
    assert last_line(ask(sim, "sharp", asking(grade))) == ("fault", 5)


def test_what_is_not_a_known_suite_task_gets_the_ordinary_answer(sim):
    sim.set("sharp", suite_skill=1.0)
    unknown = {"kind": "bug", "code": "print('not a shipped task')\n", "lines": [1]}
    assert ask(sim, "sharp", asking(unknown)).startswith("Simulated answer from sharp.")
    assert ask(sim, "sharp", "What is 2 + 2?").startswith("Simulated answer from sharp.")


def test_a_suite_dirs_that_is_not_a_list_of_folders_is_refused():
    with pytest.raises(ValueError, match="suite_dirs"):
        validate_behaviour({"suite_skill": 0.5, "suite_dirs": [3]})
    with pytest.raises(ValueError, match="suite_skill"):
        validate_behaviour({"suite_skill": "high"})

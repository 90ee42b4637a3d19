"""Every shipped suite task's key is right, shown by running its code.

A model is scored against these keys, so a wrong key scores the right answer as wrong. Each bug's
code fails its check and passes once only its key lines are fixed (so the fault is on the stated
line), each control passes the same check, and each claim is as true or false as its key says.
The task files are read as plain YAML here, apart from the gateway's loader.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

import gateway

TASKS = Path(gateway.__file__).parent / "suite" / "tasks"
KEYS = yaml.safe_load((Path(__file__).parent / "keys.yaml").read_text())
NODE = shutil.which("node")
NO_NODE = "node is missing: apt-get install nodejs (.ci/install-agents does) to check JS tasks"


def task(task_id: str) -> dict[str, Any]:
    loaded = yaml.safe_load((TASKS / f"{task_id}.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def ids_of(kind: str) -> list[str]:
    return sorted(p.stem for p in TASKS.glob("*.yaml") if task(p.stem)["kind"] == kind)


def fixed(code: str, fix: dict[int, str]) -> str:
    """*code* with each key line replaced by its fix (which may span several lines)."""
    lines = code.splitlines()
    for number, text in fix.items():
        lines[number - 1] = text
    return "\n".join(lines) + "\n"


class Outcome:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.passed = done.returncode == 0
        self.errors = done.stderr

    @property
    def assertion_failed(self) -> bool:
        return not self.passed and ("AssertionError" in self.errors)


def run(language: str, code: str, check: str, tmp_path: Path) -> Outcome:
    """*check* run after *code*: in a fresh Python, or in node inside an async function."""
    if language == "python":
        script = tmp_path / "task.py"
        script.write_text(code + "\n\n" + check)
        command = [sys.executable, str(script)]
    else:
        if NODE is None:
            pytest.skip(NO_NODE)
        body = "\n".join("  " + line for line in check.splitlines())
        script = tmp_path / "task.js"
        script.write_text(
            code
            + "\n;(async () => {\n  const assert = require('node:assert/strict');\n"
            + body
            + "\n})().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });\n"
        )
        command = [NODE, str(script)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    return Outcome(done)


def test_the_package_ships_at_least_forty_tasks_of_every_kind_language_and_shape() -> None:
    tasks = [task(p.stem) for p in TASKS.glob("*.yaml")]
    assert len(tasks) >= 44
    assert {t["kind"] for t in tasks} == {"bug", "control", "claim"}
    assert {t["language"] for t in tasks} == {"python", "javascript"}
    assert {"review", "code", "general"} <= {t.get("shape", "review") for t in tasks}
    for kind in ("bug", "control", "claim"):
        for language in ("python", "javascript"):
            assert sum(t["kind"] == kind and t["language"] == language for t in tasks) >= 5


def test_every_task_has_a_key_check_and_every_check_a_task() -> None:
    assert sorted(KEYS) == sorted(p.stem for p in TASKS.glob("*.yaml"))


@pytest.mark.parametrize("task_id", sorted(p.stem for p in TASKS.glob("*.yaml")))
def test_each_task_file_is_in_the_contract_format(task_id: str) -> None:
    t = task(task_id)
    allowed = {"kind", "shape", "language", "code", "lines", "claim", "truth"}
    assert set(t) <= allowed
    assert isinstance(t["code"], str) and t["code"].strip()
    count = len(t["code"].splitlines())
    if t["kind"] == "bug":
        assert t["lines"] and all(1 <= n <= count for n in t["lines"])
        assert "claim" not in t and "truth" not in t
    elif t["kind"] == "control":
        assert not ({"lines", "claim", "truth"} & set(t))
    else:
        assert isinstance(t["claim"], str) and isinstance(t["truth"], bool)
        assert "lines" not in t


@pytest.mark.parametrize("task_id", ids_of("bug"))
def test_a_bug_fails_its_check_and_passes_once_its_key_lines_are_fixed(
    task_id: str, tmp_path: Path
) -> None:
    t, key = task(task_id), KEYS[task_id]
    original = t["code"].splitlines()
    assert set(key["fix"]) & set(t["lines"]), "a fix mends a line of the key"
    for number in set(key["fix"]) - set(t["lines"]):
        assert set(original[number - 1].strip()) <= set("(){};"), "elsewhere only brackets"
    for number, text in key["fix"].items():
        indent = len(original[number - 1]) - len(original[number - 1].lstrip())
        assert not text or text.startswith(original[number - 1][:indent])
    broken = run(t["language"], t["code"], key["check"], tmp_path)
    assert not broken.passed, f"{task_id}: the shipped code passes its check"
    mended = run(t["language"], fixed(t["code"], key["fix"]), key["check"], tmp_path)
    assert mended.passed, f"{task_id}: still failing with its key lines fixed:\n{mended.errors}"


@pytest.mark.parametrize("task_id", ids_of("control"))
def test_a_control_passes_the_check_of_the_bug_it_resembles(task_id: str, tmp_path: Path) -> None:
    t, key = task(task_id), KEYS[task_id]
    if "pair" in key:
        bug, bug_key = task(key["pair"]), KEYS[key["pair"]]
        assert bug["kind"] == "bug" and bug["language"] == t["language"]
        assert t["code"] == fixed(bug["code"], bug_key["fix"]), "the bug's code, fixed"
        check = bug_key["check"]
    else:
        check = key["check"]
    outcome = run(t["language"], t["code"], check, tmp_path)
    assert outcome.passed, f"{task_id}: the control fails:\n{outcome.errors}"


@pytest.mark.parametrize("task_id", ids_of("claim"))
def test_a_claim_is_as_true_as_its_key_says(task_id: str, tmp_path: Path) -> None:
    t, key = task(task_id), KEYS[task_id]
    outcome = run(t["language"], t["code"], key["check"], tmp_path)
    if t["truth"]:
        assert outcome.passed, f"{task_id}: the true claim does not hold:\n{outcome.errors}"
    else:
        assert outcome.assertion_failed, f"{task_id}: the false claim holds:\n{outcome.errors}"


def test_the_task_files_ship_in_the_package_data() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    globs = project["tool"]["setuptools"]["package-data"]["gateway"]
    shipped = {p for g in globs for p in Path(gateway.__file__).parent.glob(g)}
    assert set(TASKS.glob("*.yaml")) <= shipped

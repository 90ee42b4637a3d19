"""Suite task files (contract §20): the shipped folder and the user's `suite.dir`, where a task
replaces a shipped one of the same id, and a malformed file named with its problem, skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.config.settings import parse_config
from gateway.suite.tasks import SHIPPED, load
from tests.helpers.bench import bench_raw
from tests.suite.known import write_tasks


def test_the_shipped_tasks_load_without_a_problem_and_hold_every_kind():
    tasks = load()
    assert tasks.problems == ()
    assert {t.kind for t in tasks.by_id.values()} == {"bug", "control", "claim"}


def test_a_task_file_reads_as_the_contract_says(tmp_path: Path):
    tasks = load(write_tasks(tmp_path), shipped=tmp_path / "none")
    bug = tasks.by_id["t-mean-bug"]
    assert (bug.kind, bug.shape, bug.language, bug.lines) == ("bug", "review", "python", (2,))
    assert bug.code == "def mean(xs):\n    return sum(xs) / len(xs) + 1\n"
    claim = tasks.by_id["t-mean-claim"]
    assert (claim.claim, claim.truth, claim.lines) == ("mean([]) returns 0", False, ())


def test_a_task_in_the_users_folder_replaces_the_shipped_one_and_adds_its_own(tmp_path: Path):
    shipped = sorted(load().by_id)[0]
    (tmp_path / f"{shipped}.yaml").write_text(
        "kind: bug\ncode: |\n  a = 1\n  b = a / 0\nlines: [2]\n"
    )
    (tmp_path / "mine-only.yaml").write_text("kind: control\nshape: code\ncode: 'x = 1'\n")
    tasks = load(tmp_path)
    assert tasks.by_id[shipped].code == "a = 1\nb = a / 0\n"
    assert tasks.by_id[shipped].shape == "review"  # the default shape
    assert tasks.by_id["mine-only"].shape == "code"
    assert len(tasks) == len(load()) + 1


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("kind: bug\ncode: 'x = 1'\n", "a bug task needs lines"),
        ("kind: bug\ncode: 'x = 1'\nlines: [3]\n", "line 3 is not a line of the code (1 to 1)"),
        ("kind: riddle\ncode: 'x'\n", "kind must be one of bug, control, claim"),
        ("kind: control\n", "code is missing or empty"),
        ("kind: claim\ncode: x\nclaim: y\ntruth: maybe\n", "truth must be true or false"),
        ("kind: claim\ncode: x\ntruth: true\n", "a claim task needs claim"),
        ("kind: control\ncode: x\nlines: [1]\n", "lines belong to a bug task"),
        ("kind: control\ncode: x\ncolour: red\n", "unknown field(s) colour"),
        ("kind: [\n", "is not valid YAML"),
        ("- a list\n", "is not a mapping"),
    ],
)
def test_a_malformed_task_is_named_with_its_problem_and_skipped(tmp_path, text, problem, caplog):
    (tmp_path / "bad.yaml").write_text(text)
    (tmp_path / "good.yaml").write_text("kind: control\ncode: x\n")
    tasks = load(tmp_path)
    assert "bad" not in tasks.by_id and "good" in tasks.by_id
    (said,) = tasks.problems
    assert said.startswith(f"{tmp_path / 'bad.yaml'}: ") and problem in said
    assert problem in caplog.text


def test_suite_dir_is_read_relative_to_the_config_with_the_contracts_defaults(tmp_path):
    raw = bench_raw("http://127.0.0.1:9")
    config = parse_config(raw, base=tmp_path)
    suite = config.suite
    assert (suite.dir, suite.share, suite.schedule_s, suite.quick) == (None, 0.5, 0.0, 8)
    assert (suite.prior_weight, suite.onboard, config.suite_dir) == (5.0, True, None)
    raw["suite"] = {"dir": "my-tasks", "share": 0.25}
    config = parse_config(raw, base=tmp_path)
    assert config.suite_dir == (tmp_path / "my-tasks").resolve() and config.suite.share == 0.25
    assert SHIPPED.is_dir()

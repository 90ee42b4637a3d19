"""The suite replay's column for the seed, end to end for one seed: its own route mode, in its
own venv, ranking from suite answers saved in its own format.

Needs the seed's venv (`python benchmarks/setup_envs.py seed`, Benchwarmers 0.3.3 from PyPI,
which `.ci/run` builds); skipped without it, and under CI it fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from evidence_suite import Tasks, asking, scored  # noqa: E402
from evidence_suite_seed import BENCH, SeedBench, World, run  # noqa: E402
from setup_envs import is_ready  # noqa: E402

from simulator import suite  # noqa: E402
from tests.helpers.installed import installed  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def seed_venv() -> None:
    hint = "the seed's venv is missing: python benchmarks/setup_envs.py seed"
    installed("ready" if is_ready("seed") else None, hint, "seed suite replay")


@pytest.fixture(scope="module")
def tasks() -> Tasks:
    return Tasks()


def test_the_seed_scores_each_quick_set_as_our_scorer_does(tasks, tmp_path):
    world = World(4, tasks)
    bench = SeedBench(tmp_path / "home", BENCH, world.skill, 1)
    try:
        for alias, skill in world.skill.items():
            world.answers(bench, alias, skill)
        recall = bench.ask({"op": "recall"})["recall"]
    finally:
        bench.close()
    for alias, skill in world.skill.items():
        marks = [
            scored(tasks.review[i], suite.answer(f"seed4-{alias}", asking(
                tasks.review[i], tasks.language[i]), skill) or "")
            for i in world.quick
        ]  # fmt: skip
        assert recall[alias] == [sum(bool(m) for m in marks), len(marks), len(marks)]


def test_as_shipped_the_seed_routes_on_none_of_these_tasks(tasks, tmp_path):
    world = World(4, tasks)
    bench = SeedBench(tmp_path / "home", BENCH, world.skill, 1)
    try:
        for alias, skill in world.skill.items():
            world.answers(bench, alias, skill, shipped=True)
        assert bench.ask({"op": "recall"})["recall"] == {}
    finally:
        bench.close()


def test_one_seed_replays_end_to_end_and_verdicts_unseat_the_deceiver(tasks, tmp_path):
    got = run(1, tasks, tmp_path)
    assert got.skills == World(1, tasks).skill
    assert got.newcomer_primary is not None and got.newcomer_primary <= 60
    assert got.deceiver_was_primary
    assert got.deceiver_judged is not None  # it lost the route turn once judged useless

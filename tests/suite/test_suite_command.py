"""`bench-gateway suite run` starts a run in a running gateway and waits for it, then prints each
model's figures; `bench-gateway models` shows them. The real command in a subprocess."""

from __future__ import annotations

from tests.cli.test_client import bench
from tests.helpers.bench import bench_raw, served
from tests.suite.test_suite_follow_up import SHIPPED, SKILL
from tests.suite.test_suite_runs import suite_raw


def test_suite_run_waits_for_the_run_and_prints_the_figures(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), answer="It adds one.\nFAULT: line 2")
    done = bench("suite", "run", "--models", "alpha", "--tasks", "t-mean-bug,t-mean-control",
                 url=gw.url)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("suite run s") and lines[0].endswith(": 2 asked, 2 answered")
    assert "done" in lines[0]
    row = next(line for line in lines if line.startswith("alpha"))
    assert row.split() == ["alpha", "review", "1/1", "1", "1", "50%"]
    assert gw.http.get("/bench/suite").json()["running"] is False
    listed = bench("models", url=gw.url)
    alpha = next(line for line in listed.stdout.splitlines() if line.startswith("alpha"))
    assert "[suite: found 1/1 · 1 false alarm(s) · 1 confidently wrong]" in alpha


def test_suite_run_naming_an_unknown_model_says_so_and_fails(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    done = bench("suite", "run", "--models", "nobody", url=gw.url)
    assert done.returncode == 1 and "No model 'nobody'" in done.stderr
    assert sim.log() == []


def test_suite_run_quick_waits_for_the_follow_up_too_and_prints_every_figure(make_gateway, sim):
    gw = make_gateway(bench_raw(sim.url))
    for alias, skill in SKILL.items():
        sim.set(served(alias), suite_skill=skill)
    done = bench("suite", "run", "--quick", url=gw.url)
    assert done.returncode == 0, done.stderr
    quick, follow_up = done.stdout.splitlines()[:2]
    rest = len(SHIPPED) - 8
    assert quick.startswith("suite run s") and quick.endswith(": 48 asked, 48 answered")
    assert follow_up.endswith(f" done: {2 * rest} asked, {2 * rest} answered (follow-up)")
    assert f"note: a follow-up follows: gamma, delta asked {rest} more task(s)" in done.stderr
    bugs = sum(t.kind == "bug" and t.shape == "review" for t in SHIPPED.values())
    rows = {tuple(line.split()[:2]): line.split() for line in done.stdout.splitlines()[2:]}
    assert rows[("gamma", "review")] == ["gamma", "review", f"{bugs}/{bugs}", "0", "0", "100%"]
    assert rows[("alpha", "review")][-1] == "0%"  # the quick set only: asked nothing more
    assert gw.http.get("/bench/suite").json()["running"] is False

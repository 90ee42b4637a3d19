"""`bench-gateway models` lists health, retires and restores by hand; `status` shows the
actions first. The real command in a subprocess against a real gateway."""

from __future__ import annotations

from tests.cli.test_client import bench
from tests.health.test_bench_keeps_itself import answers, duo_raw
from tests.helpers.bench import served


def test_models_retire_and_restore_by_hand(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    listed = bench("models", url=gw.url)
    assert listed.returncode == 0, listed.stderr
    assert any(line.split()[:3] == ["alpha", "one", "ok"] for line in listed.stdout.splitlines())
    retired = bench("models", "retire", "alpha", "--why", "withdrawn upstream", url=gw.url)
    assert retired.returncode == 0, retired.stderr
    assert retired.stdout.strip() == "alpha: retired (withdrawn upstream)"
    assert gw.runtime.model_health.book.of("alpha").health == "retired"
    listed = bench("models", "--url", gw.url)
    assert "retired  withdrawn upstream" in listed.stdout
    restored = bench("models", "restore", "alpha", url=gw.url)
    assert restored.returncode == 0 and restored.stdout.strip() == "alpha: ok"


def test_retire_without_why_is_a_usage_error(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    done = bench("models", "retire", "alpha", url=gw.url)
    assert done.returncode == 2 and "--why" in done.stderr
    assert gw.runtime.model_health.book.of("alpha").health == "ok"


def test_status_shows_the_actions_first(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(410, "Gone."))
    gw.ask("bench/duo")
    done = bench("status", url=gw.url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "action needed:"
    assert lines[1].startswith("  - alpha is retired (gone: ") and "bench/duo" in lines[1]

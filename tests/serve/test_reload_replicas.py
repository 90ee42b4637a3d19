"""Replicas reload on their own signals (contract §15, §19): two `bench-gateway serve` processes
on config files of their own, naming the same PostgreSQL store and Redis state. Each takes its
file again when it is sent SIGHUP, and only then; under steady traffic on both, no request
fails; what the replicas share in Redis (a cooldown) is kept across the reload."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import yaml

from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import wait_until
from tests.helpers.steady import Steady
from tests.serve.test_crash import HANG_S, Served
from tests.serve.test_reload import with_model


def _listed(url: str) -> set[str]:
    return {m["id"] for m in httpx.get(f"{url}/v1/models", timeout=HANG_S).json()["data"]}


def _cooling(url: str, alias: str) -> float | None:
    rows = httpx.get(f"{url}/bench/models", timeout=HANG_S).json()["models"]
    return next(row["cooling_until"] for row in rows if row["alias"] == alias)


def _reloaded(replica: Served) -> None:
    replica.signal(signal.SIGHUP)
    replica.wait_for_output("INFO:     Reloaded ")


def test_each_replica_reloads_on_its_own_signal_and_no_request_fails(
    sim, pg_server, redis_server, tmp_path: Path
):
    if redis_server.proc is None:
        redis_server.start()
    raw = bench_raw(sim.url, workers=1, seat_timeout_s=60, drain_timeout_s=60)
    raw["store"], raw["state"] = pg_server.new_database(), redis_server.new_database()
    paths = [tmp_path / f"{name}.yaml" for name in ("a", "b")]
    for path in paths:
        path.write_text(yaml.safe_dump(raw))
    a, b = (Served(path, tmp_path / f"{path.stem}.log", workers=1) for path in paths)
    try:
        a.start()
        b.start()
        sim.set(served("beta"), status=429, retry_after=900)
        nominated = {"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]}
        httpx.post(
            f"{a.url}/v1/chat/completions", json={**nominated, "with": ["beta"]}, timeout=HANG_S
        )
        cooling = _cooling(a.url, "beta")
        assert cooling is not None and _cooling(b.url, "beta") == cooling  # shared in Redis
        for alias in ("alpha", "gamma", "delta"):
            sim.set(served(alias), latency_s=0.2)  # panels in flight when the signal lands

        grown = with_model(raw, "eta")
        grown["collections"] = {**grown["collections"], "fresh": {"members": ["eta"]}}
        for path in paths:
            path.write_text(yaml.safe_dump(grown))
        with Steady(a.url) as on_a, Steady(b.url) as on_b:
            wait_until(lambda: on_a.done() >= 8 and on_b.done() >= 8, timeout=HANG_S)
            _reloaded(a)
            after = on_a.done(), on_b.done()
            wait_until(
                lambda: on_a.done() >= after[0] + 8 and on_b.done() >= after[1] + 8,
                timeout=HANG_S,
            )
        assert on_a.failures() == [] and on_b.failures() == []
        assert "bench/fresh" in _listed(a.url)
        assert "bench/fresh" not in _listed(b.url)  # its own signal has not come
        assert _cooling(a.url, "beta") == cooling  # kept across the reload

        _reloaded(b)
        assert "bench/fresh" in _listed(b.url)
        assert _cooling(b.url, "beta") == cooling
    finally:
        a.stop()
        b.stop()

"""Two replicas of two workers each on one PostgreSQL store and one Redis state (contract §15,
§19): what the providers' listings say is the same on both, an expired model is retired on both
(once, in the store's history), and each replica reloads on its own signal under steady traffic
on both without one request failing.

Real `bench-gateway serve --workers 2` processes, started once for the module on config files of
their own, in front of a simulated provider of the module's own whose listing states one model
free, one paid, one expiring soon, one expired and one missing.
"""

from __future__ import annotations

import datetime
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml

from gateway.serve.server import ServerThread
from simulator import create_sim_app
from tests.helpers.bench import bench_raw
from tests.helpers.clocks import wait_until
from tests.helpers.steady import Steady
from tests.serve.test_crash import HANG_S, Served

HELD_S = 0.2  # each answer's latency: a steady load always has requests in flight
SPEC = {
    "models": {
        "*": {"latency_s": HELD_S},
        "sim-alpha": {"latency_s": HELD_S, "listing": {"free": True, "context_length": 131072}},
        "sim-beta": {"latency_s": HELD_S, "listing": {"free": False}},
        "sim-gamma": {"latency_s": HELD_S, "listing": {"free": True, "expires_in_days": 3}},
        "sim-delta": {"latency_s": HELD_S, "listing": {"free": True}},
        "sim-epsilon": {"latency_s": HELD_S, "listing": {"free": True, "expires_in_days": -1}},
        "sim-zeta": {"latency_s": HELD_S, "listing": False},
    }
}
EXPIRED = "expired on {}, per the provider's listing"


def day(offset: int) -> str:
    return (datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(offset)).isoformat()


class Replicas:
    def __init__(self, replicas: list[Served], paths: list[Path], raw: dict[str, Any]) -> None:
        self.replicas, self.paths, self.raw = replicas, paths, raw


@pytest.fixture(scope="module")
def provider() -> Iterator[ServerThread]:
    server = ServerThread(create_sim_app(SPEC)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def replicas(provider, pg_server, redis_server, tmp_path_factory) -> Iterator[Replicas]:
    if redis_server.proc is None:
        redis_server.start()
    folder = tmp_path_factory.mktemp("replica-workers")
    raw = bench_raw(provider.url, workers=2, seat_timeout_s=60, drain_timeout_s=60)
    raw["store"], raw["state"] = pg_server.new_database(), redis_server.new_database()
    raw["connections"] = {name: {"listing": True} for name in ("one", "two", "three")}
    paths = [folder / f"{name}.yaml" for name in ("a", "b")]
    for path in paths:
        path.write_text(yaml.safe_dump(raw))
    started = [Served(path, folder / f"{path.stem}.log", workers=2) for path in paths]
    try:
        for replica in started:
            replica.start()
        yield Replicas(started, paths, raw)
    finally:
        for replica in started:
            replica.stop()


def rows(url: str) -> dict[str, dict[str, Any]]:
    """`/bench/models` on a new connection (so from whichever worker the kernel gives it)."""
    models = httpx.get(f"{url}/bench/models", timeout=HANG_S).json()["models"]
    return {row["alias"]: row for row in models}


def listing_facts(url: str) -> dict[str, tuple[Any, ...]]:
    return {
        alias: (row["listed"], row["free"], row["expires"], row["health"], row["health_why"])
        for alias, row in rows(url).items()
    }


def test_both_replicas_show_the_same_listing_and_the_expired_model_is_retired_once(
    replicas, pg_server
):
    expected = {
        "alpha": (True, True, None, "ok", None),
        "beta": (True, False, None, "ok", None),
        "gamma": (True, True, day(3), "ok", None),
        "delta": (True, True, None, "ok", None),
        "epsilon": (True, True, day(-1), "retired", EXPIRED.format(day(-1))),
        "zeta": (False, None, None, "ok", None),
    }
    for replica in replicas.replicas:
        wait_until(lambda r=replica: listing_facts(r.url) == expected, timeout=HANG_S)
        for _ in range(4):  # each worker, as new connections reach it
            assert listing_facts(replica.url) == expected
    actions = httpx.get(f"{replicas.replicas[1].url}/bench/health", timeout=HANG_S).json()
    assert any(a.startswith(f"gamma expires on {day(3)}") for a in actions["actions"])
    with psycopg.connect(replicas.raw["store"]) as db:
        events = db.execute("SELECT alias, health, why FROM health_events").fetchall()
    assert events == [("epsilon", "retired", EXPIRED.format(day(-1)))]


def _reloaded(replica: Served, before: int) -> None:
    wait_until(lambda: replica.log.read_text().count("INFO:     Reloaded ") > before, HANG_S)


def test_each_replica_of_two_workers_reloads_under_steady_traffic_and_none_fails(replicas):
    a, b = replicas.replicas
    pair = {"members": ["alpha", "beta"], "description": "added by the reload"}
    grown = {**replicas.raw, "collections": {**replicas.raw["collections"], "pair": pair}}
    for path in replicas.paths:
        path.write_text(yaml.safe_dump(grown))
    with Steady(a.url) as on_a, Steady(b.url) as on_b:
        wait_until(lambda: on_a.done() >= 8 and on_b.done() >= 8, timeout=HANG_S)
        signalled = time.monotonic()
        for replica in (a, b):  # each on its own signal, one after the other
            before = replica.log.read_text().count("INFO:     Reloaded ")
            replica.signal(signal.SIGHUP)
            _reloaded(replica, before)
        after = on_a.done(), on_b.done()
        wait_until(
            lambda: on_a.done() >= after[0] + 8 and on_b.done() >= after[1] + 8, timeout=HANG_S
        )
    assert on_a.failures() == [] and on_b.failures() == []
    assert on_a.spanning(signalled) and on_b.spanning(signalled)
    for replica in (a, b):
        listed = httpx.get(f"{replica.url}/v1/models", timeout=HANG_S).json()["data"]
        assert "bench/pair" in {m["id"] for m in listed}
        assert rows(replica.url)["epsilon"]["health"] == "retired"  # kept across the reload

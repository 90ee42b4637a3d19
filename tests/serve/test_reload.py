"""Reloading the config of a running gateway (contract §19): SIGHUP and `POST /bench/reload`.

Real `bench-gateway serve` processes, one in each worker mode (one process; two workers, each
on a listening socket of its own; two workers sharing one socket, as where the platform has no
SO_REUSEPORT), started once for the module on a config file each; every test writes the file it
wants and reloads. The
simulated upstream answers each trio member after a fifth of a second, so a steady load always
has panels, streams and route turns in flight when a reload lands.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from gateway.panel.probe import PROMPT as PROBE
from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import wait_until
from tests.helpers.programs import bench_gateway_without_reuseport
from tests.helpers.steady import Steady
from tests.serve.test_crash import HANG_S, Served

# the module's gateway (fixture) serving each worker mode
MODES = {"one process": "one", "two workers": "two", "two workers on one socket": "shared"}


class Bench:
    """A served gateway and its config file."""

    def __init__(self, gateway: Served, path: Path, raw: dict[str, Any], asked: int) -> None:
        self.gateway, self.path, self.raw = gateway, path, raw
        self.asked_at_start = asked  # calls the simulator had from the gateway once it served
        self.http = httpx.Client(base_url=gateway.url, timeout=HANG_S)

    def write(self, raw: dict[str, Any]) -> None:
        self.path.write_text(yaml.safe_dump(raw))

    def reloads(self) -> int:
        return self.gateway.log.read_text(errors="replace").count("INFO:     Reloaded ")

    def hang_up(self) -> None:
        """SIGHUP, and wait until every process serves the file's config."""
        before = self.reloads()
        self.gateway.signal(signal.SIGHUP)
        self.wait_reloaded(before)

    def wait_reloaded(self, before: int) -> None:
        wait_until(lambda: self.reloads() > before, timeout=HANG_S)

    def models(self) -> dict[str, dict[str, Any]]:
        rows = self.http.get("/bench/models").json()["models"]
        return {row["alias"]: row for row in rows}


def with_model(raw: dict[str, Any], alias: str, **bench: Any) -> dict[str, Any]:
    """*raw* with one more simulated model (`sim-<alias>`) on its own connection."""
    base = raw["model_list"][0]["litellm_params"]
    entry = {
        "model_name": alias,
        "litellm_params": {**base, "model": f"openai/sim-{alias}"},
        "bench": {"connection": f"c-{alias}", **bench},
    }
    return {**raw, "model_list": [*raw["model_list"], entry]}


def without_model(raw: dict[str, Any], alias: str) -> dict[str, Any]:
    return {**raw, "model_list": [m for m in raw["model_list"] if m["model_name"] != alias]}


def _bench(
    sim_server, folder: Path, workers: int, program: list[str] | None = None
) -> Iterator[Bench]:
    raw = bench_raw(sim_server.url, seat_timeout_s=60, drain_timeout_s=60, workers=workers)
    raw["store"] = f"sqlite:///{folder / 'records.db'}"
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"], "description": "route mode"}
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    sim_server.state.reset()
    gateway = Served(path, folder / "gateway.log", workers=workers, program=program).start()
    bench = Bench(gateway, path, raw, len(sim_server.log()))
    try:
        yield bench
    finally:
        bench.http.close()
        gateway.stop()


@pytest.fixture(scope="module")
def one(sim_server, tmp_path_factory) -> Iterator[Bench]:
    yield from _bench(sim_server, tmp_path_factory.mktemp("one"), 1)


@pytest.fixture(scope="module")
def two(sim_server, tmp_path_factory) -> Iterator[Bench]:
    yield from _bench(sim_server, tmp_path_factory.mktemp("two"), 2)


@pytest.fixture(scope="module")
def shared(sim_server, tmp_path_factory) -> Iterator[Bench]:
    folder = tmp_path_factory.mktemp("shared")
    yield from _bench(sim_server, folder, 2, bench_gateway_without_reuseport())


def bench_for(request: pytest.FixtureRequest, mode: str) -> Bench:
    bench: Bench = request.getfixturevalue(MODES[mode])
    bench.write(bench.raw)  # as it started, whatever an earlier test left
    bench.hang_up()
    return bench


def slow_trio(sim) -> None:
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), latency_s=0.2)


@pytest.mark.parametrize("mode", MODES)
def test_under_steady_traffic_not_one_request_fails_across_a_reload(request, sim, mode):
    bench = bench_for(request, mode)
    slow_trio(sim)
    grown = with_model(without_model(bench.raw, "zeta"), "eta")
    grown["collections"] = {**grown["collections"], "fresh": {"members": ["eta"]}}
    with Steady(bench.gateway.url) as load:
        wait_until(lambda: load.done() >= 12, timeout=HANG_S)
        bench.write(grown)
        signalled = time.monotonic()
        bench.hang_up()
        after = load.done()
        wait_until(lambda: load.done() >= after + 12, timeout=HANG_S)
    assert load.failures() == []  # not one refused, cut or failed
    assert load.spanning(signalled)  # requests were in flight when the signal came
    asked = {o.ask for o in load.outcomes if o.began > signalled}
    assert asked == {"bench/trio", "bench/trio stream", "bench/trio:route"}
    reply = bench.http.post(
        "/v1/chat/completions",
        json={"model": "bench/fresh", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert reply.status_code == 200, reply.text
    member = reply.json()["bench"]["seats"][0]
    assert (member["seat"], member["alias"], member["status"]) == ("member1", "eta", "ok")
    probes = [r for r in sim.log("sim-eta") if r["body"]["messages"] == PROBE]
    assert len(probes) == 1  # onboarded once, by one worker
    assert "zeta" not in bench.models()


@pytest.mark.parametrize("mode", MODES)
def test_under_steady_traffic_not_one_request_fails_across_a_reload_asked_over_http(
    request, sim, mode
):
    bench = bench_for(request, mode)
    slow_trio(sim)
    pair = {"members": ["alpha", "beta"], "description": "asked for over HTTP"}
    bench.write({**bench.raw, "collections": {**bench.raw["collections"], "pair": pair}})
    with Steady(bench.gateway.url) as load:
        wait_until(lambda: load.done() >= 12, timeout=HANG_S)
        before = bench.reloads()
        asked = time.monotonic()
        reply = bench.http.post("/bench/reload")
        bench.wait_reloaded(before)  # every process serves the new config
        after = load.done()
        wait_until(lambda: load.done() >= after + 12, timeout=HANG_S)
    assert reply.status_code == 200, reply.text
    assert reply.json()["collections"]["added"] == ["pair"]
    assert load.failures() == []  # not one refused, cut or failed
    assert load.spanning(asked)  # requests were in flight when the reload was asked
    # (on a new connection: one kept open to a replaced worker gets its last answer from it)
    listed = httpx.get(f"{bench.gateway.url}/v1/models", timeout=HANG_S).json()["data"]
    assert "bench/pair" in {m["id"] for m in listed}


def test_where_so_reuseport_is_missing_the_workers_share_one_listening_socket(two, shared):
    """The mode under test is the one meant: one listening socket per worker, or one shared."""
    assert listening_sockets(two.gateway.port) == 2
    assert listening_sockets(shared.gateway.port) == 1


def listening_sockets(port: int) -> int:
    """How many sockets listen on *port* (the kernel's table: state 0A is LISTEN)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    fields = [row.split() for row in rows]
    return sum(1 for f in fields if f[1].endswith(f":{port:04X}") and f[3] == "0A")


@pytest.mark.parametrize("mode", MODES)
def test_a_config_check_config_refuses_is_logged_and_the_running_one_kept(request, sim, mode):
    bench = bench_for(request, mode)
    collections = {**bench.raw["collections"], "wrong": {"members": ["alpha", "nobody"]}}
    broken = {**bench.raw, "collections": collections}
    bench.write(broken)
    log = bench.gateway.log
    refusals = log.read_text().count("Reload refused, the running config is kept: ")
    bench.gateway.signal(signal.SIGHUP)
    wait_until(lambda: log.read_text().count("Reload refused") > refusals, timeout=HANG_S)
    lines = [text for text in log.read_text().splitlines() if "Reload refused" in text]
    (line,) = lines[refusals:]
    assert "collections.wrong.members[1]: unknown alias 'nobody'" in line

    refused = bench.http.post("/bench/reload")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "config_refused"
    assert "unknown alias 'nobody'" in error["message"] and str(bench.path) in error["message"]
    solo = bench.http.post(
        "/v1/chat/completions",
        json={"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert solo.status_code == 200  # the running config serves on
    listed = {m["id"] for m in bench.http.get("/v1/models").json()["data"]}
    assert "bench/solo" in listed and "bench/wrong" not in listed


def test_the_reply_says_what_changed_and_new_models_are_onboarded_probe_then_quick_set(
    request, sim
):
    bench = bench_for(request, "one process")
    assert bench.asked_at_start == 0  # a gateway's first start asks nobody on its own
    sim.set("sim-kappa", status=410)  # withdrawn: its probe finds out before any panel does
    sim.set("sim-theta", suite_skill=1.0)  # answers the suite's tasks, all of them right
    runs_before = {run["id"] for run in bench.http.get("/bench/suite").json()["runs"]}
    bench.write(with_model(with_model(without_model(bench.raw, "epsilon"), "theta"), "kappa"))
    reply = bench.http.post("/bench/reload")
    assert reply.status_code == 200, reply.text
    assert reply.json() == {
        "reloaded": True,
        "config": str(bench.path),
        "added": ["theta", "kappa"],
        "removed": ["epsilon"],
        "changed": [],
        "collections": {"added": [], "removed": [], "changed": []},
        "workers": 1,
    }
    wait_until(lambda: bench.models()["kappa"]["health"] == "retired", timeout=HANG_S)

    def onboarding_run() -> dict[str, Any] | None:
        runs = bench.http.get("/bench/suite").json()["runs"]
        fresh = [run for run in runs if run["id"] not in runs_before]
        return fresh[0] if fresh and fresh[0]["state"] != "running" else None

    wait_until(lambda: onboarding_run() is not None, timeout=HANG_S)
    run = onboarding_run()
    assert run is not None
    assert (run["models"], run["quick"], run["state"]) == (["theta", "kappa"], 1, "done")
    asked = [r["body"]["messages"] for r in sim.log("sim-theta")]
    assert asked[0] == PROBE  # the probe first, then the quick set: one call per task
    assert len(asked) == 1 + len(run["tasks"]) and len(run["tasks"]) == 8
    assert len(sim.log("sim-kappa")) == 1  # its probe retired it: no quick set asked of it
    assert any("kappa" in note for note in run["notes"])
    staying = {served(alias) for alias in ("alpha", "beta", "gamma", "delta")}
    assert not [r for r in sim.log() if r["model"] in staying]  # the others: not asked
    assert bench.models()["theta"]["health"] == "ok"
    figures = bench.models()["theta"]["suite"]  # before anyone judged it
    assert sum(shape["answered"] for shape in figures.values()) == 8
    assert {shape["accuracy"] for shape in figures.values()} == {1.0}
    again = bench.http.post("/bench/reload")
    assert (again.json()["added"], again.json()["removed"]) == ([], [])
    assert len(sim.log("sim-kappa")) == 1 and len(sim.log("sim-theta")) == len(asked)


@pytest.mark.parametrize("mode", MODES)
def test_cooldowns_health_figures_and_conversations_survive_a_reload(request, sim, mode):
    bench = bench_for(request, mode)
    http = bench.http
    sim.set(served("beta"), status=429, retry_after=900)
    ask = {"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}], "with": ["beta"]}
    http.post("/v1/chat/completions", json=ask)
    retired = http.post("/bench/models/epsilon/retire", json={"why": "kept across reloads"})
    assert retired.status_code == 200, retired.text
    sim.set(served("alpha"), status=503, fail_times=1)  # the route turn goes to gamma
    turn = [{"role": "user", "content": "plan the trip"}]
    first = http.post("/v1/chat/completions", json={"model": "bench/duo:route", "messages": turn})
    first_bench = first.json()["bench"]
    assert first_bench["alias"] == "gamma"
    before = bench.models()
    assert before["beta"]["cooling_until"] is not None

    bench.write(with_model(bench.raw, "iota"))
    bench.hang_up()

    after = bench.models()
    assert after["beta"]["cooling_until"] == before["beta"]["cooling_until"]
    assert (after["epsilon"]["health"], after["epsilon"]["health_why"]) == (
        "retired",
        "kept across reloads",
    )
    for alias in ("alpha", "beta", "gamma", "delta"):
        assert after[alias]["seated"] == before[alias]["seated"]
    turn += [
        {"role": "assistant", "content": first.json()["choices"][0]["message"]["content"]},
        {"role": "user", "content": "and the hotel?"},
    ]
    later = http.post("/v1/chat/completions", json={"model": "bench/duo:route", "messages": turn})
    later_bench = later.json()["bench"]
    assert (later_bench["alias"], later_bench["turn"]) == ("gamma", 2)
    assert later_bench["conversation"] == first_bench["conversation"]
    http.post("/bench/models/epsilon/restore")


def test_a_reload_the_board_has_room_for_is_taken_and_one_it_has_not_is_refused(request, sim):
    bench = bench_for(request, "one process")
    many = bench.raw
    for n in range(40):
        many = with_model(many, f"extra{n}", rpm=100)
    many["collections"] = {**many["collections"], "extras": {"members": ["extra39"]}}
    bench.write(many)
    assert bench.http.post("/bench/reload").status_code == 200
    reply = bench.http.post(
        "/v1/chat/completions",
        json={"model": "bench/extras", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert reply.status_code == 200, reply.text

    bench.write(with_model(bench.raw, "vast", rpm=1_000_000))  # a million rpm slots
    refused = bench.http.post("/bench/reload")
    assert refused.status_code == 409
    assert "restart the gateway to take it" in refused.json()["error"]["message"]
    assert "extra39" in bench.models()  # the running config is kept

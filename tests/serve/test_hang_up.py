"""SIGHUP reloads the config (contract §19), in every worker mode, and every request in flight
at the signal gets its whole reply: a terminal's hang-up (SIGHUP to the whole process group) or
`kill -HUP` once ended a one-worker gateway at once, and every client waiting on it got no reply;
then it drained and stopped, as on SIGTERM; now the gateway serves on, on the file's config.
(tests/serve/test_reload.py reloads under steady traffic.)

A real `bench-gateway serve` subprocess; the simulated upstream runs in the test's process on a
clock the test moves, so the four calls are in flight when the signal lands, however slow the
machine, and answer only once the test lets them (tests/serve/test_crash.py has the same set-up
for SIGTERM and `kill -9`)."""

from __future__ import annotations

import os
import signal

import httpx
import pytest
import yaml

from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import wait_until
from tests.serve.test_crash import (
    HANG_S,
    HELD,
    Served,
    ask_in_thread,
    clock,  # noqa: F401  (fixture)
    db_rows,
    in_flight,
    sim,  # noqa: F401  (fixture)
)

CLIENTS = 4


@pytest.fixture
def slow_gateway(sim, tmp_path):  # noqa: F811
    """Start a gateway of *workers* processes whose one collection, `slowok`, is a single model
    held until the test moves the clock; stopped after."""
    started: list[Served] = []

    def start(workers: int) -> Served:
        raw = bench_raw(
            sim.url, max_explorers=0, reserves=0, seat_timeout_s=HANG_S, drain_timeout_s=HANG_S,
            workers=workers,
        )  # fmt: skip
        raw["collections"]["slowok"] = {"members": ["alpha"], "description": "one slow model"}
        raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
        config = tmp_path / "bench.yaml"
        config.write_text(yaml.safe_dump(raw))
        gateway = Served(config, tmp_path / "gateway.log", workers=workers)
        started.append(gateway)
        return gateway.start()

    yield start
    for gateway in started:
        gateway.stop()


@pytest.mark.parametrize(
    ("workers", "to"),
    [(1, "process"), (1, "group"), (2, "process"), (2, "group")],
    ids=["one worker, kill -HUP", "one worker, hang-up", "two workers, kill -HUP",
         "two workers, hang-up"],
)  # fmt: skip
def test_sighup_reloads_and_every_request_in_flight_gets_its_whole_reply(
    slow_gateway,
    sim,  # noqa: F811
    clock,  # noqa: F811
    tmp_path,
    workers,
    to,
):
    sim.set(served("alpha"), latency_s=HELD)
    gateway = slow_gateway(workers)
    asked = [
        ask_in_thread(
            gateway.url,
            {"model": "bench/slowok", "messages": [{"role": "user", "content": f"q{n}"}]},
        )
        for n in range(CLIENTS)
    ]
    wait_until(lambda: len(in_flight(sim, ["alpha"])) == CLIENTS, timeout=HANG_S)

    raw = yaml.safe_load(gateway.config.read_text())
    raw["collections"]["quick"] = {"members": ["beta"], "description": "new on the reload"}
    gateway.config.write_text(yaml.safe_dump(raw))
    assert gateway.proc is not None
    if to == "group":  # a terminal's hang-up: every process of the foreground group
        os.killpg(gateway.proc.pid, signal.SIGHUP)
    else:
        gateway.signal(signal.SIGHUP)
    gateway.wait_for_output("INFO:     Reloaded ")  # every process on the new config
    assert all(thread.is_alive() for thread, _ in asked)  # still held: nobody was cut off

    clock.advance(HELD)  # the model answers now, after the reload
    panels = []
    for thread, outcome in asked:
        thread.join(HANG_S)
        assert "error" not in outcome, outcome.get("error")  # before: no reply at all
        response: httpx.Response = outcome["response"]
        assert response.status_code == 200, response.text
        (seat,) = response.json()["bench"]["seats"]
        assert seat["status"] == "ok" and seat["answer"]
        panels.append(response.json()["bench"]["panel"])
    with httpx.Client(timeout=HANG_S) as http:  # serving on, on the new config
        quick = http.post(
            f"{gateway.url}/v1/chat/completions",
            json={"model": "bench/quick", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert quick.status_code == 200, quick.text
    panels.append(quick.json()["bench"]["panel"])

    gateway.signal(signal.SIGTERM)
    code = gateway.wait()
    assert code == 0, f"exit code {code}:\n{gateway.output()}"
    rows = db_rows(tmp_path / "records.db", "SELECT panel_id, status FROM calls")
    assert sorted(r["panel_id"] for r in rows) == sorted(panels)
    assert {r["status"] for r in rows} == {"ok"}


@pytest.mark.parametrize("workers", [1, 2], ids=["one worker", "two workers"])
def test_a_sighup_while_the_gateway_starts_is_a_reload_once_it_serves(
    sim,  # noqa: F811
    tmp_path,
    workers,
):
    """Before, a SIGHUP in the seconds `serve` takes to start (litellm's import, the store)
    ended it at once, signal's default: a service manager's reload killed a starting gateway."""
    raw = bench_raw(sim.url, workers=workers)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    gateway = Served(config, tmp_path / "gateway.log", workers=workers)
    try:
        gateway.launch()
        gateway.wait_for_output("Bench Gateway: config")  # the file is read; start-up follows
        raw["collections"]["quick"] = {"members": ["beta"], "description": "new on the reload"}
        config.write_text(yaml.safe_dump(raw))
        gateway.signal(signal.SIGHUP)
        gateway.wait_for_output("INFO:     Reloaded ")  # (the gateway exiting fails at once)
        quick = httpx.post(
            f"{gateway.url}/v1/chat/completions",
            json={"model": "bench/quick", "messages": [{"role": "user", "content": "hi"}]},
            timeout=HANG_S,
        )
        assert quick.status_code == 200, quick.text
    finally:
        gateway.stop()

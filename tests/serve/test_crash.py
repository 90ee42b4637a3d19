"""The gateway as a process that dies: `kill -9` mid-panel, and SIGTERM with panels in flight.

The gateway runs as a real `bench-gateway serve` subprocess on a config file; the simulated
upstream runs in the test's process on a clock the test moves, so a slow seat is in flight until
the test lets it answer, however slow the machine (a wall-clock latency had to outlast every
step before the signal, and under load it sometimes did not), and its request log shows which
calls were in flight at the moment of the signal. Every wait ends on an event (a reply, a line
of output, a call reaching the upstream, the process's exit); the limits are hang guards only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.serve.server import ServerThread, free_port
from simulator import create_sim_app
from tests.helpers.bench import Sim, bench_raw, served
from tests.helpers.clocks import ManualClock, wait_until
from tests.helpers.programs import bench_gateway

FIVE = ("alpha", "beta", "gamma", "delta", "epsilon")
FAST, SLOW = FIVE[:2], FIVE[2:]
HELD = 1.0  # a seat's latency on the simulator's clock: it answers when the test moves the clock
HANG_S = 300.0  # how long any wait may take before the test calls it hung; never a margin
WORKERS = 2  # as `serve` runs on two cores, on any machine: the supervisor passes SIGTERM on


class Served:
    """One `bench-gateway serve` process on `config`, its output in `log`: a supervisor and its
    WORKERS workers, in a process group of their own."""

    def __init__(
        self, config: Path, log: Path, workers: int = WORKERS, program: list[str] | None = None
    ) -> None:
        """*program*: how `bench-gateway` is run (tests/helpers/programs.py)."""
        self.config, self.log, self.workers = config, log, workers
        self.program = program or bench_gateway()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Served:
        """Started, and every worker serving: a worker still starting at a signal would end
        without the shutdown the tests look for."""
        self.launch()
        self.wait_for_output("Application startup complete.", count=self.workers)
        with httpx.Client(timeout=HANG_S) as http:
            assert http.get(f"{self.url}/healthz").status_code == 200
        return self

    def launch(self) -> None:
        """Started, not waited for."""
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*self.program, "serve", "--config", str(self.config), "--port", str(self.port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def kill_all(self) -> None:
        """`kill -9` of the gateway, workers and all (as a container's end or a machine's); the
        supervisor alone would leave its workers to drain their panels (tests/cli/test_main.py)."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        wait_until(lambda: not group_running(self.proc.pid), timeout=HANG_S)

    def wait(self, timeout: float = HANG_S) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def wait_for_output(self, text: str, count: int = 1) -> None:
        """Until *text* is in the output *count* times (once per worker, say); the gateway
        exiting first fails at once."""
        assert self.proc is not None
        deadline = time.monotonic() + HANG_S
        while self.log.read_text(errors="replace").count(text) < count:
            assert self.proc.poll() is None, f"the gateway exited:\n{self.output()}"
            assert time.monotonic() < deadline, f"no {text!r} in the gateway's output"
            time.sleep(0.05)

    def stop(self) -> None:
        """Whatever state the test left it in: gone afterwards, workers too."""
        if self.proc is not None:
            if group_running(self.proc.pid):
                self.kill_all()
            self.proc.wait(HANG_S)


def group_running(group: int) -> bool:
    """Whether any process of *group* is still running (a zombie has ended: it holds nothing)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[2]) == group and stat[0] != "Z":
                    return True
    return False


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def sim(clock) -> Iterator[Sim]:
    """This file's own simulated upstream, its pauses on `clock`: quick unless a test holds a
    model (`latency_s=HELD`), whose calls then stay in flight until `clock.advance(HELD)`."""
    server = ServerThread(create_sim_app({"models": {"*": {"latency_s": 0}}}, clock=clock))
    yield Sim(server.start())
    server.stop()


@pytest.fixture
def serve(sim, tmp_path):
    """Start gateways on one config and one store (a restart reuses both); all stopped after.
    Held seats answer when the test says, so the seat and drain limits sit far beyond any run."""
    raw = bench_raw(
        sim.url,
        max_explorers=0,
        reserves=0,
        seat_timeout_s=HANG_S,
        drain_timeout_s=HANG_S,
        workers=WORKERS,
    )
    raw["collections"]["five"] = {"members": list(FIVE), "description": "five seats"}
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    started: list[Served] = []

    def start() -> Served:
        gateway = Served(config, tmp_path / f"gateway{len(started)}.log")
        started.append(gateway)
        return gateway.start()

    yield start
    for gateway in started:
        gateway.stop()


def body(content: str, *, stream: bool = False) -> dict:
    return {
        "model": "bench/five",
        "messages": [{"role": "user", "content": content}],
        "stream": stream,
    }


def db_rows(path: Path, sql: str, *args) -> list[dict]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(sql, args)]


def seat_sections(response: httpx.Response) -> Iterator[dict]:
    """Each seat's section of a streamed panel as it arrives: call id, status, answer."""
    for count, line in enumerate(response.iter_lines()):
        assert count < 10_000, "a panel stream that never ends"
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[len("data: ") :])
        assert "error" not in chunk, chunk
        for choice in chunk.get("choices", []):
            text = choice["delta"].get("content") or ""
            if text.startswith("## "):
                head, _, answer = text.partition("\n\n")
                call, status = head.splitlines()[1].split(" · ")[:2]
                yield {"call": call.strip("`"), "status": status, "answer": answer.strip()}


def in_flight(sim, aliases) -> list[dict]:
    return [r for a in aliases for r in sim.log(served(a)) if r["ended"] is None]


def test_a_gateway_killed_mid_panel_keeps_every_delivered_seat_and_starts_again(
    serve, sim, tmp_path
):
    for alias in SLOW:  # in flight until the kill: the clock is never moved
        sim.set(served(alias), latency_s=HELD)
    gateway = serve()
    delivered: dict[str, list[dict]] = {}
    with (
        httpx.Client(base_url=gateway.url, timeout=HANG_S) as http,
        contextlib.ExitStack() as open_,
    ):
        responses = []
        for n in range(3):
            response = open_.enter_context(
                http.stream("POST", "/v1/chat/completions", json=body(f"panel {n}", stream=True))
            )
            assert response.status_code == 200
            responses.append(response)
        for response in responses:
            panel = response.headers["X-Bench-Panel"]
            sections = seat_sections(response)
            delivered[panel] = [next(sections) for _ in FAST]  # the quick seats; the rest wait
        wait_until_in_flight(sim, 3 * len(SLOW))  # every slow seat of the three panels
        gateway.kill_all()
        assert gateway.wait() == -signal.SIGKILL
    wait_until_in_flight(sim, 0)  # no process is left to hold a call

    store = tmp_path / "records.db"
    assert db_rows(store, "PRAGMA integrity_check") == [{"integrity_check": "ok"}]

    restarted = serve()
    with httpx.Client(base_url=restarted.url, timeout=HANG_S) as http:
        for panel, sections in delivered.items():
            record = http.get(f"/bench/panels/{panel}")
            assert record.status_code == 200, record.text
            recorded = {seat["id"]: seat for seat in record.json()["seats"]}
            for section in sections:
                assert section["call"] in recorded, f"{section['call']} was answered, not kept"
                seat = recorded[section["call"]]
                assert seat["status"] == section["status"] == "ok"
                assert seat["answer"].strip() == section["answer"]
            for seat in recorded.values():  # nothing half-written either
                assert seat["status"] and seat["finished"] is not None

        sim.state.reset()  # every model quick again
        fresh = http.post("/v1/chat/completions", json=body("after the restart"))
        assert fresh.status_code == 200, fresh.text
        assert [s["status"] for s in fresh.json()["bench"]["seats"]] == ["ok"] * len(FIVE)


def ask_in_thread(url: str, payload: dict) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def ask() -> None:
        try:
            outcome["response"] = httpx.post(
                f"{url}/v1/chat/completions", json=payload, timeout=HANG_S
            )
        except httpx.HTTPError as exc:  # kept for the assertion, not raised in the thread
            outcome["error"] = exc

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    return thread, outcome


def wait_until_in_flight(sim, count: int) -> None:
    """Until exactly *count* calls are in flight at the upstream (held ones stay so)."""
    wait_until(lambda: len(in_flight(sim, FIVE)) == count, timeout=HANG_S)


def test_sigterm_lets_the_panel_in_flight_finish_and_be_recorded_then_exits_cleanly(
    serve, sim, clock, tmp_path
):
    for alias in FIVE:
        sim.set(served(alias), latency_s=HELD)
    gateway = serve()
    thread, outcome = ask_in_thread(gateway.url, body("in flight at SIGTERM"))
    wait_until_in_flight(sim, len(FIVE))

    gateway.signal(signal.SIGTERM)
    gateway.wait_for_output("Shutting down", count=WORKERS)  # each closes its listener right after
    try:
        late = httpx.post(f"{gateway.url}/v1/chat/completions", json=body("late"), timeout=10)
    except httpx.TransportError:
        pass  # refused: the listener is closed (or closed under a connection it had queued)
    else:
        assert late.status_code == 503, late.text
        assert set(late.json()["error"]) == {"message", "type", "param", "code"}
    assert thread.is_alive() and len(in_flight(sim, FIVE)) == len(FIVE)  # still held: draining

    clock.advance(HELD)  # the seats answer now, after the gateway began to shut down
    thread.join(HANG_S)
    assert not thread.is_alive()
    assert "error" not in outcome, outcome.get("error")
    response = outcome["response"]
    assert response.status_code == 200, response.text
    bench = response.json()["bench"]
    assert [s["status"] for s in bench["seats"]] == ["ok"] * len(FIVE)

    code = gateway.wait()
    rows = db_rows(
        tmp_path / "records.db", "SELECT * FROM calls WHERE panel_id = ?", bench["panel"]
    )
    assert sorted(r["id"] for r in rows) == sorted(s["call"] for s in bench["seats"])
    assert all(r["status"] == "ok" for r in rows)
    assert len(sim.log()) == len(FIVE), "the request after SIGTERM reached the upstream"
    assert code == 0, f"exit code {code}:\n{gateway.output()}"


def test_sigterm_drains_a_panel_whose_client_hung_up_before_exiting(serve, sim, clock, tmp_path):
    for alias in FIVE:
        sim.set(served(alias), latency_s=HELD)
    gateway = serve()
    with httpx.Client(base_url=gateway.url, timeout=HANG_S) as http:
        with http.stream(
            "POST", "/v1/chat/completions", json=body("abandoned", stream=True)
        ) as response:
            assert response.status_code == 200
            panel = response.headers["X-Bench-Panel"]
        # the client has hung up; the panel runs on as the gateway's own task
    wait_until_in_flight(sim, len(FIVE))

    gateway.signal(signal.SIGTERM)
    # no request holds either worker now: each goes on to its app's shutdown, where the one
    # running the panel drains it (gateway/app.py) before the store closes
    gateway.wait_for_output("Waiting for application shutdown.", count=WORKERS)
    assert gateway.proc is not None and gateway.proc.poll() is None  # the panel holds the exit
    clock.advance(HELD)
    code = gateway.wait()

    rows = db_rows(tmp_path / "records.db", "SELECT * FROM calls WHERE panel_id = ?", panel)
    assert len(rows) == len(FIVE), f"{len(rows)} of {len(FIVE)} seats recorded"
    assert all(r["status"] == "ok" for r in rows)
    assert code == 0, f"exit code {code}:\n{gateway.output()}"
    assert db_rows(tmp_path / "records.db", "PRAGMA integrity_check") == [{"integrity_check": "ok"}]

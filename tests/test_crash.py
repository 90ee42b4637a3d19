"""The gateway as a process that dies: `kill -9` mid-panel, and SIGTERM with panels in flight.

The gateway runs as a real `bench-gateway serve` subprocess on a config file; the simulated
upstream is the shared in-process one, so each seat's latency is set per model and its request
log shows which calls were still in flight at the moment of the signal.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.serving import free_port
from tests.conftest import bench_raw, served

FIVE = ("alpha", "beta", "gamma", "delta", "epsilon")
FAST, SLOW = FIVE[:2], FIVE[2:]


def bench_gateway() -> list[str]:
    script = Path(sys.executable).parent / "bench-gateway"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gateway.cli"]


class Served:
    """One `bench-gateway serve` process on `config`, its output in `log`."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config, self.log = config, log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> Served:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*bench_gateway(), "serve", "--config", str(self.config), "--port", str(self.port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the gateway exited early:\n{self.output()}"
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            time.sleep(0.1)
        raise AssertionError(f"the gateway did not become healthy:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def wait_for_output(self, text: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output():
            assert time.monotonic() < deadline, f"no {text!r} in the gateway's output"
            time.sleep(0.05)

    def stop(self) -> None:
        """Whatever state the test left it in: gone afterwards."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


@pytest.fixture
def serve(sim, tmp_path):
    """Start gateways on one config and one store (a restart reuses both); all stopped after."""
    raw = bench_raw(sim.url, max_explorers=0, reserves=0, seat_timeout_s=30)
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
    for alias in FAST:
        sim.set(served(alias), latency_s=0.1)
    for alias in SLOW:  # long enough to be in flight at the kill on any machine; nobody waits
        sim.set(served(alias), latency_s=30.0)
    gateway = serve()
    delivered: dict[str, list[dict]] = {}
    with httpx.Client(base_url=gateway.url, timeout=30) as http, contextlib.ExitStack() as open_:
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
            delivered[panel] = [next(sections) for _ in FAST]  # the quick seats; the rest wait 30 s
        still_running = in_flight(sim, SLOW)
        gateway.signal(signal.SIGKILL)
        assert gateway.wait() == -signal.SIGKILL

    assert still_running, "no seat was in flight at the kill; the test proves nothing"
    store = tmp_path / "records.db"
    assert db_rows(store, "PRAGMA integrity_check") == [{"integrity_check": "ok"}]

    restarted = serve()
    with httpx.Client(base_url=restarted.url, timeout=30) as http:
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
            outcome["response"] = httpx.post(f"{url}/v1/chat/completions", json=payload, timeout=60)
        except httpx.HTTPError as exc:  # kept for the assertion, not raised in the thread
            outcome["error"] = exc

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    return thread, outcome


def wait_until_in_flight(sim, count: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while len(in_flight(sim, FIVE)) < count:
        assert time.monotonic() < deadline, f"{count} seats never reached the upstream"
        time.sleep(0.02)


def test_sigterm_lets_the_panel_in_flight_finish_and_be_recorded_then_exits_cleanly(
    serve, sim, tmp_path
):
    for alias in FIVE:
        sim.set(served(alias), latency_s=2.0)
    gateway = serve()
    thread, outcome = ask_in_thread(gateway.url, body("in flight at SIGTERM"))
    wait_until_in_flight(sim, len(FIVE))

    gateway.signal(signal.SIGTERM)
    gateway.wait_for_output("Shutting down")  # uvicorn closes its listener right after this
    try:
        late = httpx.post(f"{gateway.url}/v1/chat/completions", json=body("late"), timeout=10)
    except httpx.TransportError:
        pass  # refused: the listener is closed (or closed under a connection it had queued)
    else:
        assert late.status_code == 503, late.text
        assert set(late.json()["error"]) == {"message", "type", "param", "code"}

    thread.join(60)
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


def test_sigterm_drains_a_panel_whose_client_hung_up_before_exiting(serve, sim, tmp_path):
    for alias in FIVE:
        sim.set(served(alias), latency_s=2.0)
    gateway = serve()
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        with http.stream(
            "POST", "/v1/chat/completions", json=body("abandoned", stream=True)
        ) as response:
            assert response.status_code == 200
            panel = response.headers["X-Bench-Panel"]
        # the client has hung up; the panel runs on as the gateway's own task
    wait_until_in_flight(sim, len(FIVE))

    gateway.signal(signal.SIGTERM)
    code = gateway.wait()

    rows = db_rows(tmp_path / "records.db", "SELECT * FROM calls WHERE panel_id = ?", panel)
    assert len(rows) == len(FIVE), f"{len(rows)} of {len(FIVE)} seats recorded"
    assert all(r["status"] == "ok" for r in rows)
    assert code == 0, f"exit code {code}:\n{gateway.output()}"
    assert db_rows(tmp_path / "records.db", "PRAGMA integrity_check") == [{"integrity_check": "ok"}]

"""The `bench-gateway` command as a user runs it: real processes, real exit codes."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.serving import free_port

ROOT = Path(__file__).parents[1]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def wait_healthy(base: str, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{base} was not healthy within {timeout_s} s")


def test_help_shows_examples_and_every_command():
    result = run("--help")
    assert result.returncode == 0
    for word in ("serve", "demo", "simulate", "check-config", "examples:"):
        assert word in result.stdout
    sub = run("serve", "--help")
    assert sub.returncode == 0 and "example:" in sub.stdout


def test_bad_usage_exits_2():
    assert run("fly").returncode == 2


def test_check_config_prints_what_the_config_defines():
    result = run("check-config", "--config", "config/bench.yaml")
    assert result.returncode == 0, result.stderr
    for word in ("reviewers", "kimi", "moonbase", "review", "general, code"):
        assert word in result.stdout


def test_check_config_names_a_bad_alias_and_exits_1(tmp_path):
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    raw["collections"]["reviewers"]["members"].append("ghost")
    raw["collections"]["design"]["shape"] = "poetry"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    result = run("check-config", "--config", str(bad))
    assert result.returncode == 1
    assert "unknown alias 'ghost'" in result.stderr
    assert "unknown shape 'poetry'" in result.stderr


def test_check_config_prints_the_gateway_settings_so_a_typo_shows():
    result = run("check-config", "--config", "config/bench.yaml")
    assert result.returncode == 0, result.stderr
    for line in ("gateway:", "  max_calls: 5", "  seat_timeout_s: 60.0", "  workers: auto"):
        assert f"\n{line}\n" in result.stdout


def shipped_with(**sections) -> str:
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    raw.update(sections)
    return yaml.safe_dump(raw)


MALFORMED = {
    "empty": ("", ["the config is empty"]),
    "a list": ("- model_list\n- collections\n", ["the config: expected a mapping"]),
    "invalid YAML": ("model_list: [unclosed\n", ["is not valid YAML"]),
    "a typo": (shipped_with(gatway={"max_calls": 3}), ["gatway: unknown key; did you mean"]),
    "unset variable": (
        shipped_with(
            model_list=[{"model_name": "m", "litellm_params": {"model": "os.environ/NO_SUCH_VAR"}}],
            collections={"c": {"members": ["m"]}},
        ),
        ["model_list[0].litellm_params.model: references os.environ/NO_SUCH_VAR"],
    ),
    "wrong shapes everywhere": (
        shipped_with(
            connections={"x": 5},
            collections={"core": ["kimi"]},
            gateway="fast",
            store=5,
        ),
        [
            "connections.x: expected a mapping",
            "collections.core: expected a mapping with members, got a list",
            "gateway: expected a mapping of gateway settings, got 'fast'",
            "store: expected sqlite:///PATH or postgresql://",
        ],
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_check_config_names_every_problem_by_path_without_a_traceback(tmp_path, case):
    text, expected = MALFORMED[case]
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    result = run("check-config", "--config", str(path))
    assert result.returncode == 1 and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("bench-gateway: ")
    for words in expected:
        assert words in result.stderr, result.stderr


def test_demo_once_prints_every_seat_with_its_call_id():
    result = run("demo", "--once", "--port", str(free_port()), timeout=180)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "member1 — kimi" in out and "member2 — qwen-coder" in out
    assert out.count(" · ok · ") >= 3
    assert "/bench/verdict" in out


def test_serve_and_simulate_run_as_processes(tmp_path):
    sim_port, gw_port = free_port(), free_port()
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    for entry in raw["model_list"]:
        entry["litellm_params"]["api_base"] = f"http://127.0.0.1:{sim_port}/v1"
    raw["store"] = f"sqlite:///{tmp_path / 'served.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "BENCH_CONFIG": str(config)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway.cli",
                "simulate",
                "--port",
                str(sim_port),
                "--spec",
                "config/simulate.yaml",
            ],
            cwd=ROOT,
            env=env,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "serve", "--port", str(gw_port)],
            cwd=ROOT,
            env=env,
        ),
    ]
    try:
        base = f"http://127.0.0.1:{gw_port}"
        wait_healthy(base)
        reply = httpx.post(
            f"{base}/v1/chat/completions",
            json={"model": "bench/reviewers", "messages": [{"role": "user", "content": "hi"}]},
            timeout=30,
        )
        assert reply.status_code == 200
        assert reply.json()["bench"]["seats"][0]["status"] == "ok"
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


def _serve_two_workers(tmp_path, sim) -> tuple[subprocess.Popen, int, Path]:
    from tests.conftest import bench_raw

    port = free_port()
    raw = bench_raw(sim.url)
    store = tmp_path / "shared.db"
    raw["store"] = f"sqlite:///{store}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    proc = subprocess.Popen([*argv, "--port", str(port), "--workers", "2"], cwd=ROOT)
    wait_healthy(f"http://127.0.0.1:{port}")
    _wait_listening(port, 2)
    return proc, port, store


def _wait_listening(port: int, count: int, timeout_s: float = 60) -> None:
    from benchmarks.load import listening

    deadline = time.monotonic() + timeout_s
    while listening(port) != count and time.monotonic() < deadline:
        time.sleep(0.1)
    # each worker listens on a socket of its own, so the kernel spreads connections evenly
    assert listening(port) == count


def _workers(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[1]) == pid and b"spawn_main" in cmdline:
                found.append(int(entry.name))
    return found


def test_serve_with_two_workers_shares_one_store(tmp_path, sim):
    import sqlite3
    from concurrent.futures import ThreadPoolExecutor

    proc, port, store = _serve_two_workers(tmp_path, sim)
    try:
        base = f"http://127.0.0.1:{port}"
        body = {"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]}
        with ThreadPoolExecutor(10) as pool:
            replies = list(
                pool.map(
                    lambda _: httpx.post(f"{base}/v1/chat/completions", json=body, timeout=60),
                    range(20),
                )
            )
        assert [r.status_code for r in replies] == [200] * 20
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT COUNT(*) FROM panels").fetchone()[0] == 20
        assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 100


def test_a_worker_that_dies_is_replaced_and_the_gateway_keeps_answering(tmp_path, sim):
    import signal

    proc, port, _ = _serve_two_workers(tmp_path, sim)
    try:
        first = _workers(proc.pid)
        assert len(first) == 2
        os.kill(first[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = _workers(proc.pid)
            if len(now) == 2 and first[0] not in now:
                break
            time.sleep(0.1)
        assert first[1] in now and len(now) == 2 and first[0] not in now
        _wait_listening(port, 2)  # the new worker is ready
        body = {"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]}
        for _ in range(6):  # fresh connections, spread over both workers
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            reply = httpx.post(url, json=body, timeout=60)
            assert reply.status_code == 200
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0


def _worker_serving(connection: http.client.HTTPConnection, port: int, workers: list[int]) -> int:
    """Which worker holds the server end of *connection* (read from /proc)."""
    mine = connection.sock.getsockname()[1]
    inode = next(
        fields[9]
        for fields in (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
        if int(fields[1].split(":")[1], 16) == port and int(fields[2].split(":")[1], 16) == mine
    )
    for pid in workers:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
    raise AssertionError("no worker holds the connection")


def test_workers_share_cooldowns_so_a_limited_model_is_called_once(tmp_path, sim):
    from tests.conftest import served

    sim.set(served("alpha"), status=429, retry_after=30)
    proc, port, _ = _serve_two_workers(tmp_path, sim)
    body = json.dumps({"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]})
    headers = {"content-type": "application/json"}
    try:
        workers, asked, statuses = _workers(proc.pid), set(), []
        while len(asked) < 2 and len(statuses) < 40:  # fresh connections until both answered
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request("POST", "/v1/chat/completions", body, headers)
            reply = json.loads(connection.getresponse().read())
            asked.add(_worker_serving(connection, port, workers))
            statuses.append(
                next(s["status"] for s in reply["bench"]["seats"] if s["alias"] == "alpha")
            )
            connection.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
    assert len(asked) == 2, "every panel went to one worker"
    assert statuses[0] == "rate_limited" and set(statuses[1:]) == {"cooling"}
    assert len(sim.log(served("alpha"))) == 1

"""The `bench-gateway` command as a user runs it: real processes, real exit codes."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.serve.server import free_port

ROOT = Path(__file__).parents[2]


def run(*args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
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
    "invalid YAML": ("model_list: [unclosed\n", ["bench.yaml is not valid YAML: line 2, column 1"]),
    "a typo": (shipped_with(gatway={"max_calls": 3}), ["gatway: unknown key; did you mean"]),
    "unset variable": (
        shipped_with(
            model_list=[{"model_name": "m", "litellm_params": {"model": "os.environ/NO_SUCH_VAR"}}],
            collections={"c": {"members": ["m"]}},
        ),
        ["model m: litellm_params.model: references os.environ/NO_SUCH_VAR"],
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


def test_serve_refuses_a_model_whose_provider_litellm_does_not_know(tmp_path):
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    raw["model_list"][0]["litellm_params"]["model"] = "notaprovider/kimi-k2"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    result = run("serve", "--config", str(config), "--port", str(free_port()))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[1].startswith(
        "  - model kimi: litellm_params.model: provider 'notaprovider' is not one litellm knows"
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_on_a_busy_port_says_to_choose_another_and_exits_1_in_every_worker_mode(workers):
    """One process binds its socket before start-up; with workers the supervisor checks the port
    before any worker starts (workers sharing one socket, where SO_REUSEPORT is missing, go
    through the same check), so a busy port is one line, quickly, whatever the mode."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        began = time.monotonic()
        result = run("serve", "--port", str(port), "--workers", workers, timeout=180)
        seconds = time.monotonic() - began
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"port {port} is already in use" in lines[0]
    assert re.search(r"bench-gateway serve --port \d+", lines[0])
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert seconds < 60, "the port is checked before the gateway's start-up work"


REQUEST_LINE = re.compile(
    r"^INFO: +(?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d{3}) key=(?P<key>\S+) "
    r"panel=(?P<panel>\S+) (?P<seconds>\d+\.\d{3})s$"
)
SIM_LINE = re.compile(r"^INFO: +\[simulator\] POST (?P<path>\S+) 200 \d+\.\d{3}s$")


def test_serve_and_simulate_run_as_processes_and_log_each_request_without_secrets(tmp_path):
    sim_port, gw_port = free_port(), free_port()
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    for entry in raw["model_list"]:
        entry["litellm_params"]["api_base"] = f"http://127.0.0.1:{sim_port}/v1"
    raw["store"] = f"sqlite:///{tmp_path / 'served.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "BENCH_CONFIG": str(config)}
    sim_log, gw_log = tmp_path / "simulate.log", tmp_path / "serve.log"
    argv = [sys.executable, "-m", "gateway.cli"]
    with sim_log.open("wb") as sim_out, gw_log.open("wb") as gw_out:
        spec = ["--spec", "config/simulate.yaml"]
        procs = [
            subprocess.Popen(
                [*argv, "simulate", "--port", str(sim_port), *spec],
                cwd=ROOT,
                env=env,
                stdout=sim_out,
                stderr=subprocess.STDOUT,
            ),
            subprocess.Popen(  # default workers: one per core
                [*argv, "serve", "--port", str(gw_port)],
                cwd=ROOT,
                env=env,
                stdout=gw_out,
                stderr=subprocess.STDOUT,
            ),
        ]
    secret_key = "bwk_" + "k" * 43
    prompt = "a prompt that must stay out of every log"
    try:
        base = f"http://127.0.0.1:{gw_port}"
        wait_healthy(base)
        reply = httpx.post(
            f"{base}/v1/chat/completions?api_key=query-secret&user=someone",
            json={"model": "bench/reviewers", "messages": [{"role": "user", "content": prompt}]},
            headers={"Authorization": f"Bearer {secret_key}"},
            timeout=30,
        )
        assert reply.status_code == 200
        panel = reply.headers["X-Bench-Panel"]
        assert reply.json()["bench"]["seats"][0]["status"] == "ok"
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=60)

    served = gw_log.read_text()
    lines = [m.groupdict() for m in map(REQUEST_LINE.match, served.splitlines()) if m]
    asked = [line for line in lines if line["method"] == "POST"]
    assert asked == [
        {
            "method": "POST",
            "path": "/v1/chat/completions",
            "status": "200",
            "key": "local",
            "panel": panel,
            "seconds": asked[0]["seconds"],
        }
    ]
    assert any(line["path"] == "/healthz" and line["panel"] == "-" for line in lines)
    assert f"Bench Gateway: config {config}" in served
    assert f"store: sqlite:///{tmp_path / 'served.db'}" in served
    assert f"workers: {os.cpu_count()}" in served and "state: board " in served
    assert "collections (2): bench/design, bench/reviewers" in served
    assert "models (" in served and "kimi (moonbase)" in served
    # every line in one format: no line of litellm's own for each seat call (nor rich's)
    assert "LiteLLM" not in served
    assert all(re.match(r"^[A-Z]+: ", line) for line in served.splitlines() if line.strip())

    simulated = sim_log.read_text()
    assert f"Simulated upstream on http://127.0.0.1:{sim_port}/v1" in simulated
    assert "spec: config/simulate.yaml" in simulated
    assert [m["path"] for m in map(SIM_LINE.match, simulated.splitlines()) if m]
    # in one terminal, the simulator's lines are told apart from the gateway's
    assert all("[simulator] " in line for line in simulated.splitlines() if line.strip())
    assert "[simulator]" not in served
    for text in (served, simulated):
        for secret in (secret_key, "query-secret", "user=someone", "?", prompt, "Traceback"):
            assert secret not in text


def test_serve_with_one_worker_is_one_process(tmp_path, sim):
    from tests.helpers.bench import bench_raw

    raw = bench_raw(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'one.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    port, log = free_port(), tmp_path / "serve.log"
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*argv, "--port", str(port), "--workers", "1"],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=30)
        assert reply.status_code == 200
        assert _workers(proc.pid) == []
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
    served = log.read_text()
    assert "workers: 1" in served and "state: in this process" in served


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_prints_its_url_once_as_soon_as_it_listens_in_every_worker_mode(
    tmp_path, sim, workers
):
    from tests.helpers.bench import bench_raw

    raw = bench_raw(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'served.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    port, log = free_port(), tmp_path / "serve.log"
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*argv, "--port", str(port), "--workers", workers],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while f"Listening on {url}" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        assert httpx.get(f"{url}/healthz").status_code == 200  # it said so once it could
        if workers == "2":
            _wait_listening(port, 2)
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
    said = [line for line in log.read_text().splitlines() if "Listening on" in line]
    assert said == [
        f"INFO:     Listening on {url}: the API at {url}/v1, the dashboard at {url}/ (Ctrl-C stops)"
    ]


def test_the_workers_flag_wins_over_the_config_which_wins_over_one_per_core():
    from gateway.cli.serve import workers_wanted
    from gateway.config.settings import parse_config
    from tests.helpers.bench import bench_raw

    def config(**gateway):
        return parse_config(bench_raw("http://127.0.0.1:9", **gateway), base=ROOT)

    cores = os.cpu_count()
    assert workers_wanted(None, config()) == cores
    assert workers_wanted(None, config(workers="auto")) == cores
    assert workers_wanted(None, config(workers=3)) == 3
    assert workers_wanted(1, config(workers=3)) == 1
    assert workers_wanted("auto", config(workers=3)) == cores


def test_a_bad_workers_flag_is_bad_usage():
    for bad in ("0", "-2", "many"):
        result = run("serve", "--workers", bad)
        assert result.returncode == 2
        assert "--workers" in result.stderr and "Traceback" not in result.stderr


def _serve_two_workers(tmp_path, sim) -> tuple[subprocess.Popen, int, Path]:
    from tests.helpers.bench import bench_raw

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


def _children(pid: int) -> list[tuple[int, bytes]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append((int(entry.name), cmdline))
    return found


def _workers(pid: int) -> list[int]:
    """The worker processes of the `serve` supervisor *pid*: forked by its fork server (the
    process that imported the gateway once), or spawned by it where there is none."""
    workers = [child for child, cmdline in _children(pid) if b"spawn_main" in cmdline]
    for server, cmdline in _children(pid):
        if b"forkserver" in cmdline:
            workers += [child for child, _ in _children(server)]
    return workers


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


def test_workers_whose_supervisor_is_killed_drain_and_stop(tmp_path, sim):
    import signal

    proc, _, _ = _serve_two_workers(tmp_path, sim)
    workers = _workers(proc.pid)
    assert len(workers) == 2
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 60
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in workers if _running(pid)]
    for pid in left:  # not ours to leave behind, whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert left == [], "workers kept serving without their supervisor"


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; whoever adopted it has not reaped it yet


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
    from tests.helpers.bench import served

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

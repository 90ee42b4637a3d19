"""A gateway killed with `kill -9` leaves no process behind: the body reader's child (started
by a body over 1 MB) watches its parent and ends once it is gone, and multiprocessing's
resource tracker, its last user gone, ends with it. A real `bench-gateway serve` process,
killed as the OOM killer or an impatient operator would; the waits are hang guards only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import httpx
import yaml

from gateway.serve.server import free_port
from tests.helpers.bench import bench_raw
from tests.helpers.clocks import wait_until
from tests.helpers.programs import bench_gateway, wait_ready

HANG_S = 60.0  # how long any wait may take before the test calls it hung; never a margin


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command (state, ppid, ...), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(root: int) -> set[int]:
    """Every process *root* started, and theirs."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(int(stat[1]), []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def running(pid: int) -> bool:
    """Still running (a zombie has ended: it holds nothing but its exit status)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def test_the_body_readers_child_ends_when_its_gateway_is_killed(sim, tmp_path):
    raw = bench_raw(sim.url, max_explorers=0, reserves=0, workers=1)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    url = f"http://127.0.0.1:{(port := free_port())}"
    log = tmp_path / "gateway.log"
    with log.open("ab") as out:
        gateway = subprocess.Popen(
            [*bench_gateway(), "serve", "--config", str(config), "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own group: whatever it leaves is ended after the test
        )
    try:
        wait_ready(gateway, lambda: _answers(url), "the gateway", log.read_text, HANG_S)
        prompt = "word " * 300_000  # 1.5 MB: read in the body reader's child
        body = {"model": "bench/trio", "messages": [{"role": "user", "content": prompt}]}
        reply = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=HANG_S)
        assert reply.status_code == 200, reply.text
        left = descendants(gateway.pid)
        assert any("multiprocessing" in command(pid) for pid in left), "no child was started"

        gateway.send_signal(signal.SIGKILL)
        gateway.wait(HANG_S)
        wait_until(lambda: not any(running(pid) for pid in left), timeout=HANG_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(gateway.pid, signal.SIGKILL)
        gateway.wait(HANG_S)


def _answers(url: str) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    return False

"""The processes a comparison runs, each a real subprocess on loopback: the simulated upstream and
our gateway here, LiteLLM's proxy and Benchwarmers 0.3.3 in rivals.py.

Why subprocesses and not threads: the figures we want are *per process* (CPU seconds from
/proc/<pid>/stat, peak RSS from VmHWM), and a gateway sharing an interpreter with the load client
would bill the client's work to the gateway and fight it for the GIL. Every process is started in
its own session (process group) so that stopping it also stops whatever it spawned (the
Benchwarmers launcher runs its gateway as a child); ``Proc.stop`` is always reached through
``with``, so nothing outlives a failed run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from load import wait_listening

ROOT = Path(__file__).resolve().parent.parent
PROJECT_BIN = Path(sys.executable).parent  # compare.py runs on the project's venv
_TICKS = os.sysconf("SC_CLK_TCK")
OFFLINE_ENV = {  # litellm must not fetch a price map or look at model hubs
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[1])
                tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def process_tree(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(tree.get(current, ()))
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU of *pid* and its live descendants (all threads), plus reaped children."""
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / _TICKS


def memory_kb(pid: int, key: str = "VmHWM") -> int:
    """VmHWM (peak resident set) or VmRSS of a process and its workers, summed, in kB."""
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(key + ":"):
                    total += int(line.split()[1])
    return total


class Proc:
    """A subprocess in its own process group, logged to a file, stopped on exit of ``with``."""

    def __init__(self, name: str, argv: list[str], log: Path, env: dict | None = None, cwd=None):
        self.name, self.argv, self.log = name, argv, log
        self.started = time.monotonic()
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.popen = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                cwd=cwd,
                start_new_session=True,
            )
        self.pid = self.popen.pid
        self.ready_s: float | None = None

    def wait_ready(self, url: str, timeout: float = 90.0, headers: dict | None = None) -> float:
        """Poll *url* until it answers 200; return seconds since the process was started."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}): {self.tail()}")
            try:
                request = urllib.request.Request(url, headers=headers or {})
                with urllib.request.urlopen(request, timeout=2) as response:
                    if response.status == 200:
                        self.ready_s = time.monotonic() - self.started
                        return self.ready_s
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        raise RuntimeError(f"{self.name} not ready at {url} after {timeout:.0f} s: {self.tail()}")

    def tail(self, lines: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM to the whole group, SIGKILL after *timeout*; never signals other processes."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            if self.popen.poll() is not None and not _group_alive(self.pid):
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(wait)

    def __enter__(self) -> Proc:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def upstream_concurrency(sim_url: str) -> int:
    """The most seat calls the simulator had open at once, from its own request log."""
    with urllib.request.urlopen(f"{sim_url}/_sim/requests", timeout=60) as response:
        log = json.loads(response.read())["requests"]
    edges = sorted(
        [(r["started"], 1) for r in log] + [(r["ended"] or r["started"], -1) for r in log],
        key=lambda e: (e[0], e[1]),
    )
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def models(n: int) -> list[str]:
    return [f"m{i}" for i in range(1, n + 1)]


# --- the simulated upstream -------------------------------------------------------------------


def start_sim(work: Path, latency_s: float) -> tuple[Proc, str]:
    spec = work / f"sim-{latency_s:g}.json"
    spec.write_text(json.dumps({"models": {"*": {"latency_s": latency_s}}}))
    port = free_port()
    argv = [
        str(PROJECT_BIN / "bench-gateway"),
        "simulate",
        "--port",
        str(port),
        "--spec",
        str(spec),
    ]
    proc = Proc("simulator", argv, work / "sim.log")
    url = f"http://127.0.0.1:{port}"
    try:
        proc.wait_ready(url + "/healthz", timeout=60)
    except BaseException:
        proc.stop()
        raise
    return proc, url


# --- our gateway --------------------------------------------------------------------------------


def ours_config(work: Path, sim: str, store: Path, seat_timeout_s: float, **gateway) -> Path:
    model_list = [
        {
            "model_name": m,
            "litellm_params": {
                "model": f"openai/sim-{m}",
                "api_base": f"{sim}/v1",
                "api_key": "sim",
            },
            "bench": {"connection": f"c{m}", "role": "general"},
        }
        for m in models(5)
    ]
    config = {
        "model_list": model_list,
        "collections": {"five": {"members": models(5), "description": "benchmark panel"}},
        "gateway": {"max_calls": 5, "seat_timeout_s": float(seat_timeout_s), **gateway},
        "store": f"sqlite:///{store}",
    }
    path = work / f"ours-{secrets.token_hex(3)}.yaml"
    path.write_text(json.dumps(config, indent=1))  # JSON is YAML; no yaml import needed here
    return path


def start_ours(
    work: Path,
    config: Path,
    ready_timeout: float = 90,
    env: dict | None = None,
    workers: int | None = None,
) -> tuple[Proc, str]:
    """Our gateway as `serve --workers N`: N from *workers*, else `--ours-workers` of the run."""
    port = free_port()
    argv = [
        str(PROJECT_BIN / "bench-gateway"),
        "serve",
        "--config",
        str(config),
        "--port",
        str(port),
        "--workers",
        str(workers or os.environ.get("BENCH_OURS_WORKERS") or os.cpu_count() or 1),
    ]
    proc = Proc("ours", argv, work / "ours.log", env={**OFFLINE_ENV, **(env or {})}, cwd=work)
    url = f"http://127.0.0.1:{port}"
    try:
        proc.wait_ready(url + "/healthz", timeout=ready_timeout)
        asyncio.run(wait_listening(port, int(argv[-1])))  # start-up is the first 200; load waits
    except BaseException:
        proc.stop()
        raise
    return proc, url


def gateway_pid(proc: Proc) -> int:
    """The process doing the serving: the launcher's child for Benchwarmers, else the process."""
    tree = process_tree(proc.pid)
    return tree[-1] if proc.name == "benchwarmers" and len(tree) > 1 else proc.pid

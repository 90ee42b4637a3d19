"""Load: N concurrent panels of five seats against the simulated upstream, all on loopback.

Starts `bench-gateway simulate` (every seat answers after --seat-seconds) and `bench-gateway serve`
(one collection of five members, no explorers, no reserves, a generous seat timeout, a fresh
SQLite store) as subprocesses on 127.0.0.1, fires every panel at once from one async client, then
prints how many panels came back whole, panel times, the gateway's peak memory and open
descriptors, whether every panel and every seat reached the store, and the worst `/healthz`
latency while the panels were in flight (polled from a thread of its own every 100 ms; the goal
is under 1 s with 1,000 panels in flight). The gateway admits the whole burst
(`max_panels_in_flight` and `max_seats_in_flight` are raised to fit it). Both subprocesses are
stopped on the way out, whatever happened.

    .venv/bin/python benchmarks/load.py                      # 1000 panels x 5 seats of 30 s
    .venv/bin/python benchmarks/load.py --panels 100 --seat-seconds 0.5 --json

The core is importable: `await run_load(panels, seat_s)` returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import yaml

HOST = "127.0.0.1"
SEATS = 5
COLLECTION = "five"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def command() -> list[str]:
    """`bench-gateway` from this interpreter's environment, else the module."""
    script = Path(sys.executable).parent / "bench-gateway"
    if script.exists():
        return [str(script)]
    found = shutil.which("bench-gateway")
    return [found] if found else [sys.executable, "-m", "gateway.cli"]


def seat_timeout(seat_s: float) -> float:
    """Generous: a seat may wait for a connection behind many others before its own answer."""
    return float(max(120.0, 20 * seat_s))


def write_files(
    workdir: Path, sim_port: int, seat_s: float, panels: int = 1000
) -> tuple[Path, Path, Path]:
    spec = workdir / "simulate.yaml"
    spec.write_text(yaml.safe_dump({"models": {"*": {"latency_s": seat_s}}}))
    store = workdir / "records.db"
    members = [f"m{i}" for i in range(1, SEATS + 1)]
    raw = {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {
                    "model": f"openai/load-{alias}",
                    "api_base": f"http://{HOST}:{sim_port}/v1",
                    "api_key": "sim-key",
                },
                "bench": {"connection": "sim", "role": "general"},
            }
            for alias in members
        ],
        "collections": {COLLECTION: {"members": members, "description": "five seats"}},
        "gateway": {
            "max_calls": SEATS,
            "max_explorers": 0,
            "reserves": 0,
            "seat_timeout_s": seat_timeout(seat_s),
            "max_panels_in_flight": max(256, panels),
            "max_seats_in_flight": max(2048, SEATS * panels),
        },
        "store": f"sqlite:///{store}",
    }
    config = workdir / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    return spec, config, store


def start(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    with log.open("ab") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [*command(), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # a Ctrl-C here is ours to handle, not theirs
        )


def stop(proc: subprocess.Popen | None, grace_s: float = 30.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


async def wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=5) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{url} exited with {proc.returncode}:\n{log.read_text()[-2000:]}"
                )
            with contextlib.suppress(httpx.TransportError):
                if (await client.get(f"{url}/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} was not healthy within {timeout_s:g} s")


def listening(port: int) -> int:
    """How many sockets listen on *port* (Linux /proc/net): with `serve --workers N`, each
    worker listens on a socket of its own once it is ready, so N means every worker is."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count


async def wait_listening(port: int, workers: int, timeout_s: float = 90) -> None:
    """A burst sent while one worker is still starting would all land on the others."""
    deadline = time.monotonic() + timeout_s
    while listening(port) < workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{workers} workers were not all listening on {port}")
        await asyncio.sleep(0.05)


def family(pid: int) -> list[int]:
    """The gateway process and its worker processes (with `--workers N`), if any."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def open_fds(pid: int) -> int:
    return sum(len(os.listdir(f"/proc/{p}/fd")) for p in family(pid))


def peak_rss_kib(pid: int) -> int:
    """VmHWM summed over the gateway's processes."""
    total = 0
    for p in family(pid):
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1])
    return total


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the gateway's processes have used (from /proc/<pid>/stat)."""
    total = 0
    for p in family(pid):
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def settled_fds(pid: int, target: int, timeout_s: float) -> int:
    """The gateway's descriptor count once closed connections are gone: at `target` or below,
    or whatever it is after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    count = open_fds(pid)
    while count > target and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        count = open_fds(pid)
    return count


def count_rows(store: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(store)) as db:
        return {
            t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("panels", "calls")
        }


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


async def one_panel(client: httpx.AsyncClient, n: int) -> tuple[str, float]:
    """('ok', seconds) for a 200 with five ok seats, else (what went wrong, seconds)."""
    body = {
        "model": f"bench/{COLLECTION}",
        "messages": [{"role": "user", "content": f"Load panel {n}: is this retry loop safe?"}],
    }
    began = time.perf_counter()
    try:
        response = await client.post("/v1/chat/completions", json=body)
    except httpx.HTTPError as exc:
        return type(exc).__name__, time.perf_counter() - began
    seconds = time.perf_counter() - began
    if response.status_code != 200:
        return f"HTTP {response.status_code}", seconds
    seats = response.json().get("bench", {}).get("seats", [])
    statuses = Counter(seat["status"] for seat in seats)
    if len(seats) != SEATS or statuses["ok"] != SEATS:
        return "seats " + ",".join(f"{k}={v}" for k, v in sorted(statuses.items())), seconds
    return "ok", seconds


async def run_load(
    panels: int = 1000,
    seat_s: float = 30.0,
    *,
    workdir: Path | None = None,
    connection_limit: int | None = None,
    fd_settle_s: float = 30.0,
    fd_slack: int = 0,
    workers: int = 1,
) -> dict[str, Any]:
    """Run the whole benchmark and return its figures (see `report` for what each one means).

    After the run the descriptor count is read once it is back within `fd_slack` of the count
    before, or after `fd_settle_s` if it never gets there (closed connections take a moment).
    `connection_limit` sets litellm's aiohttp connection caps in the gateway's environment
    (AIOHTTP_CONNECTOR_LIMIT and ..._PER_HOST); None leaves litellm's defaults, as users get.
    """
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-load-")))
        _raise_fd_limit(panels)
        sim_port, gw_port = free_port(), free_port()
        spec, config, store = write_files(workdir, sim_port, seat_s, panels)
        env = dict(os.environ)
        if connection_limit is not None:
            env["AIOHTTP_CONNECTOR_LIMIT"] = str(connection_limit)
            env["AIOHTTP_CONNECTOR_LIMIT_PER_HOST"] = str(connection_limit)
        sim = gateway = None
        try:
            sim_log, gw_log = workdir / "simulate.log", workdir / "gateway.log"
            sim = start(
                ["simulate", "--host", HOST, "--port", str(sim_port), "--spec", str(spec)], sim_log
            )
            gateway = start(
                [
                    "serve",
                    "--host",
                    HOST,
                    "--port",
                    str(gw_port),
                    "--config",
                    str(config),
                    "--workers",
                    str(workers),
                ],
                gw_log,
                env,
            )
            url = f"http://{HOST}:{gw_port}"
            await wait_healthy(f"http://{HOST}:{sim_port}", sim, sim_log)
            await wait_healthy(url, gateway, gw_log)
            await wait_listening(gw_port, workers)
            fds_before = open_fds(gateway.pid)
            cpu_before = cpu_seconds(gateway.pid)

            limits = httpx.Limits(max_connections=panels + 10, max_keepalive_connections=0)
            timeout = httpx.Timeout(seat_timeout(seat_s) + 60, connect=60)
            began = time.perf_counter()
            with HealthPoller(url) as health:
                async with httpx.AsyncClient(
                    base_url=url, limits=limits, timeout=timeout
                ) as client:
                    results = await asyncio.gather(*(one_panel(client, n) for n in range(panels)))
            wall = time.perf_counter() - began
            cpu = cpu_seconds(gateway.pid) - cpu_before

            fds_after = await settled_fds(gateway.pid, fds_before + fd_slack, fd_settle_s)
            most_open = await most_open_upstream(f"http://{HOST}:{sim_port}")
            rows = count_rows(store)
            outcomes = Counter(what for what, _ in results)
            times = [seconds for _, seconds in results]
            ok_times = [seconds for what, seconds in results if what == "ok"]
            return {
                "panels": panels,
                "seats_per_panel": SEATS,
                "seat_seconds": seat_s,
                "ok": outcomes.pop("ok", 0),
                "failures": dict(outcomes),
                "wall_s": round(wall, 3),
                "p50_s": _round(percentile(ok_times or times, 0.50)),
                "p99_s": _round(percentile(ok_times or times, 0.99)),
                "max_s": _round(max(times, default=None)),
                "peak_rss_kib": peak_rss_kib(gateway.pid),
                "gateway_cpu_s": round(cpu, 2),
                "fds_before": fds_before,
                "fds_after": fds_after,
                "panels_recorded": rows["panels"],
                "calls_recorded": rows["calls"],
                "panels_expected": panels,
                "calls_expected": SEATS * panels,
                "connection_limit": connection_limit,
                "gateway_alive": gateway.poll() is None,
                "most_open_upstream": most_open,
                "workers": workers,
                "health_polls": len(health.latencies),
                "health_worst_s": _round(max(health.latencies, default=None)),
                "health_worst_at_s": _round(health.worst_at()),
                "health_p99_s": _round(percentile(health.latencies, 0.99)),
                "health_failures": health.failures,
            }
        finally:
            stop(gateway)
            stop(sim)


class HealthPoller:
    """GET /healthz every `every_s` from a thread and a connection of its own (so the burst's
    client does not delay it) and keep each latency; a failure is kept as what went wrong."""

    def __init__(self, url: str, every_s: float = 0.1) -> None:
        self.url, self.every_s = url, every_s
        self.latencies: list[float] = []
        self.sent_at: list[float] = []  # seconds since the poller started, per latency
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="healthz", daemon=True)
        self._began = time.perf_counter()

    def __enter__(self) -> HealthPoller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _poll(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self._stop.is_set():
                began = time.perf_counter()
                try:
                    status = client.get("/healthz").status_code
                except httpx.HTTPError as exc:
                    self.failures.append(type(exc).__name__)
                else:
                    self.latencies.append(time.perf_counter() - began)
                    self.sent_at.append(began - self._began)
                    if status != 200:
                        self.failures.append(f"HTTP {status}")
                self._stop.wait(self.every_s)

    def worst_at(self) -> float | None:
        """When the slowest poll was sent, in seconds from the start of the burst."""
        if not self.latencies:
            return None
        return self.sent_at[self.latencies.index(max(self.latencies))]


async def most_open_upstream(sim_url: str) -> int:
    """The most seat calls the upstream had open at once (from its own request log): a silent
    connection cap in the gateway's HTTP client shows here as a ceiling."""
    async with httpx.AsyncClient(timeout=60) as client:
        log = (await client.get(f"{sim_url}/_sim/requests")).json()["requests"]
    edges = sorted(
        [(r["started"], 1) for r in log] + [(r["ended"] or float("inf"), -1) for r in log]
    )
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _raise_fd_limit(panels: int) -> None:
    """Each panel holds a client connection and five upstream connections; the children inherit
    this process's limit, so lift the soft limit towards the hard one when it is too low."""
    need = 12 * panels + 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        ceiling = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, ceiling), hard))


def report(result: dict[str, Any]) -> str:
    r = result
    lines = [
        f"panels:        {r['panels']} concurrent x {r['seats_per_panel']} seats of "
        f"{r['seat_seconds']:g} s (simulated upstream, loopback)",
        f"answered:      {r['ok']}/{r['panels']} with 200 and {r['seats_per_panel']} ok seats"
        + (f"; failures: {r['failures']}" if r["failures"] else ""),
        f"panel time:    p50 {r['p50_s']} s, p99 {r['p99_s']} s, max {r['max_s']} s "
        f"(all panels in {r['wall_s']} s)",
        f"gateway RSS:   peak {r['peak_rss_kib'] / 1024:.1f} MiB (VmHWM)",
        f"gateway CPU:   {r['gateway_cpu_s']} s during the run "
        f"({1000 * r['gateway_cpu_s'] / max(1, r['calls_expected']):.1f} ms per seat)",
        f"gateway fds:   {r['fds_before']} before, {r['fds_after']} after",
        f"records:       panels {r['panels_recorded']}/{r['panels_expected']}, "
        f"calls {r['calls_recorded']}/{r['calls_expected']}",
    ]
    lines.extend(
        (
            f"/healthz:      worst {r['health_worst_s']} s ({r['health_worst_at_s']} s in), "
            f"p99 {r['health_p99_s']} s over "
            f"{r['health_polls']} polls while the panels were in flight"
            + (f"; failures: {r['health_failures'][:5]}" if r["health_failures"] else ""),
            f"upstream:      at most {r['most_open_upstream']} seat calls open at once; "
            f"gateway workers: {r['workers']}",
        )
    )
    if r["connection_limit"] is not None:
        lines.append(f"aiohttp caps:  {r['connection_limit']} connections (per host and total)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=1000, help="concurrent panels (1000)")
    parser.add_argument("--seat-seconds", type=float, default=30.0, help="seat latency (30)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument(
        "--connection-limit",
        type=int,
        default=None,
        help="set litellm's aiohttp connection caps (default: the gateway's own, 100000)",
    )
    parser.add_argument("--workers", type=int, default=1, help="gateway worker processes (1)")
    args = parser.parse_args(argv)
    if args.panels < 1 or args.seat_seconds < 0:
        parser.error("--panels must be at least 1 and --seat-seconds not negative")
    result = asyncio.run(
        run_load(
            args.panels,
            args.seat_seconds,
            connection_limit=args.connection_limit,
            workers=args.workers,
        )
    )
    print(report(result))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    whole = (
        result["ok"] == result["panels"]
        and result["panels_recorded"] == result["panels_expected"]
        and result["calls_recorded"] == result["calls_expected"]
    )
    return 0 if whole else 1


if __name__ == "__main__":
    sys.exit(main())

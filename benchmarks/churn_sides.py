"""The two gateways benchmarks/churn.py plays the month against, each behind its own simulator.

Why each its own simulator: the figures are read from the simulator's request log (every call
that reached a model, probes included) and a flaky model fails by its own count of requests,
so two gateways sharing one upstream would read each other's calls. Both simulators play the
same month on the same fast clock (benchmarks/churn_sim.py).

"ours" is this tree's `bench-gateway serve`; "before" is the gateway as it was before model
health (the commit BASELINE), unpacked with `git archive` into a folder outside the repo and
run with this venv's Python (the dependencies did not change between the two), its own code
first on PYTHONPATH.
"""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import httpx
from churn_world import config, scaled_lifecycle, sim_spec
from targets import OFFLINE_ENV, PROJECT_BIN, Proc, free_port

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "a272bea"  # the last commit before model health (contract §18) began to land
PANEL_PROMPT = "task {n}: review this change"


class Clock:
    """The simulator's fast clock, read from the wall the way the simulator reads it."""

    def __init__(self, speed: float, origin: float) -> None:
        self.speed, self.origin = speed, origin

    def sim(self, wall: float) -> float:
        return self.origin + (wall - self.origin) * self.speed

    def wall(self, sim: float) -> float:
        return self.origin + (sim - self.origin) / self.speed

    def now(self) -> float:
        return self.sim(time.time())


def unpack_baseline(into: Path) -> Path:
    """The BASELINE commit's tree in *into* (outside the repo); RuntimeError saying why not."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", BASELINE],
        capture_output=True,
        timeout=120,
    )
    if done.returncode:
        why = done.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"cannot unpack {BASELINE} with git archive: {why}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


class Side:
    """One gateway and its simulator: start, ask, read back its records, stop."""

    def __init__(self, name: str, work: Path, clock: Clock, days: float, code: Path | None):
        self.name, self.clock, self.days = name, clock, days
        self.work = work / name
        self.work.mkdir(parents=True, exist_ok=True)
        self.code = code  # the baseline's unpacked tree; None: this tree
        self.store = self.work / "records.db"
        self.procs: list[Proc] = []
        self.http = httpx.Client(timeout=120)
        self.sim = self.url = ""
        self.t0 = 0.0
        self.sent: list[dict[str, Any]] = []

    def start(self) -> None:
        spec = self.work / "sim.json"
        spec.write_text(json.dumps(sim_spec(self.days)))
        port = free_port()
        argv = [sys.executable, str(ROOT / "benchmarks" / "churn_sim.py"), "--port", str(port)]
        argv += ["--speed", str(self.clock.speed), "--origin", repr(self.clock.origin)]
        sim = Proc(f"{self.name} simulator", [*argv, "--spec", str(spec)], self.work / "sim.log")
        self.procs.append(sim)
        self.sim = f"http://127.0.0.1:{port}"
        sim.wait_ready(self.sim + "/healthz", timeout=60)
        lifecycle = scaled_lifecycle(self.clock.speed) if self.code is None else None
        path = self.work / "config.json"
        path.write_text(json.dumps(config(self.sim, f"sqlite:///{self.store}", lifecycle)))
        port = free_port()
        serve = ["serve", "--config", str(path), "--port", str(port), "--workers", "1"]
        if self.code is None:
            argv, env = [str(PROJECT_BIN / "bench-gateway"), *serve], dict(OFFLINE_ENV)
        else:
            program = "import sys; from gateway.cli.main import main; sys.exit(main())"
            argv = [sys.executable, "-c", program, *serve]
            env = {**OFFLINE_ENV, "PYTHONPATH": str(self.code)}
        gateway = Proc(self.name, argv, self.work / "gateway.log", env=env, cwd=self.work)
        self.procs.append(gateway)
        self.url = f"http://127.0.0.1:{port}"
        gateway.wait_ready(self.url + "/healthz", timeout=120)

    def begin(self) -> None:
        """The month starts now: every model's timeline from here (the simulator's reset)."""
        self.t0 = self.clock.now()
        self.http.post(f"{self.sim}/_sim/reset").raise_for_status()

    def ask(self, n: int, collection: str) -> None:
        body = {
            "model": f"bench/{collection}",
            "messages": [{"role": "user", "content": PANEL_PROMPT.format(n=n)}],
        }
        at = self.clock.now()
        reply = self.http.post(f"{self.url}/v1/chat/completions", json=body)
        panel = reply.headers.get("x-bench-panel")
        self.sent.append({"n": n, "collection": collection, "at": at, "status": reply.status_code})
        if panel is None:
            raise RuntimeError(f"{self.name}: panel {n} was not recorded: {reply.text[:300]}")
        self.sent[-1]["panel"] = panel

    def panels(self) -> list[dict[str, Any]]:
        """Every panel on the record, oldest first (GET /bench/panels, page by page)."""
        found: list[dict[str, Any]] = []
        before: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 100, **({"before": before} if before else {})}
            page = self.http.get(f"{self.url}/bench/panels", params=params).json()
            found += page["panels"]
            before = page.get("next")
            if not page["panels"] or not before:
                return found[::-1]

    def log(self) -> list[dict[str, Any]]:
        """The simulator's request log: every call that reached a model."""
        requests: list[dict[str, Any]] = self.http.get(f"{self.sim}/_sim/requests").json()[
            "requests"
        ]
        return requests

    def health(self) -> dict[str, Any] | None:
        """GET /bench/health at the month's end (None: a gateway without it)."""
        reply = self.http.get(f"{self.url}/bench/health")
        return reply.json() if reply.status_code == 200 else None

    def events(self) -> list[dict[str, Any]]:
        """Every health event the gateway kept in its store (none for a gateway without)."""
        with sqlite3.connect(self.store) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if "health_events" not in tables:
                return []
            rows = db.execute("SELECT alias, health, why, at FROM health_events ORDER BY at")
            return [{"alias": a, "health": h, "why": w, "at": at} for a, h, w, at in rows]

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()
        self.http.close()

"""A gateway as a real `bench-gateway serve --workers 1` process, for what only a process of its
own shows: its memory (RSS now, and its peak) while an upstream does its worst."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from gateway.serve.server import free_port
from tests.helpers.programs import bench_gateway, end, wait_ready


class ServedGateway:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.proc, self.url, self.log = proc, url, log
        self.http = httpx.Client(base_url=url, timeout=120)

    def _status_mb(self, field: str) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
        raise AssertionError(f"no {field} for the gateway's process")

    def rss_mb(self) -> float:
        """The gateway process's resident memory now, in MB."""
        return self._status_mb("VmRSS")

    def peak_mb(self) -> float:
        """The most resident memory the gateway process has held so far, in MB."""
        return self._status_mb("VmHWM")


@contextmanager
def served_gateway(raw: dict[str, Any], tmp_path: Path) -> Iterator[ServedGateway]:
    """*raw* (a config, its store put in *tmp_path*) served by one process until the block
    ends."""
    raw = {**raw, "store": f"sqlite:///{tmp_path / 'served.db'}"}
    config = tmp_path / "served.yaml"
    config.write_text(yaml.safe_dump(raw))
    port = free_port()
    log = tmp_path / "served.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*bench_gateway(), "serve", "--config", str(config), "--port", str(port),
             "--workers", "1"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    gateway = ServedGateway(proc, f"http://127.0.0.1:{port}", log)

    def ready() -> bool:
        try:
            return gateway.http.get("/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_ready(proc, ready, "the gateway", lambda: log.read_text(errors="replace"), 120)
        yield gateway
    finally:
        gateway.http.close()
        end(proc)

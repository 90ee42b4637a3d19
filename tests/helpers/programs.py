"""Programs a test starts (nginx, redis-server): waited for until they answer, and ended asked
first, then told."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def wait_ready(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    name: str,
    log: Callable[[], str],
    timeout_s: float = 15.0,
) -> None:
    """Until *ready()*; *proc* exiting first, or *timeout_s* passing, fails the test with the
    end of its *log()*."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert proc.poll() is None, f"{name} exited:\n{log()}"
        assert time.monotonic() < deadline, f"{name} did not start:\n{log()}"
        time.sleep(0.02)


def end(proc: subprocess.Popen[bytes] | None, grace_s: float = 10.0) -> None:
    """SIGTERM (each program's own clean shutdown), SIGKILL if it has not exited within
    *grace_s*; a program already gone, or never started, is left as it is."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(grace_s)


def bench_gateway() -> list[str]:
    script = Path(sys.executable).parent / "bench-gateway"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gateway.cli"]


def bench_gateway_without_reuseport() -> list[str]:
    """`bench-gateway` as it runs where the platform has no SO_REUSEPORT (Python's `socket`
    module lacks the name there): `serve --workers N` then shares one listening socket."""
    launch = (
        "import socket, sys; del socket.SO_REUSEPORT; "
        "from gateway.cli.main import main; sys.exit(main())"
    )
    return [sys.executable, "-c", launch]

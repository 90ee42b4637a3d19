"""Ending a program a test started: asked first, then told."""

from __future__ import annotations

import subprocess


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

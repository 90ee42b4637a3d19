"""`bench-gateway demo` as a newcomer runs it: a real process on a free port, what it prints read
as it prints it, and `bench-gateway` on a PATH for shell lines pasted as printed."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from gateway.serve.server import free_port

ROOT = Path(__file__).resolve().parents[2]
READY = "Ctrl-C stops the demo."  # the demo's last line once it serves


@dataclass
class Demo:
    url: str
    printed: list[str]  # stdout up to READY
    stderr: Path
    proc: subprocess.Popen[str] = field(repr=False)

    def commands(self, start: str = "  curl ") -> list[str]:
        """The lines it prints for pasting, as printed (without their indent)."""
        return [line.strip() for line in self.printed if line.startswith(start)]


def shell_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    """An environment whose PATH has `bench-gateway` (this tree's, run by this interpreter)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "bench-gateway"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gateway.cli "$@"\n')
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, "PATH": path, "PYTHONPATH": str(ROOT), **extra}


@contextlib.contextmanager
def running_demo(folder: Path, timeout_s: float = 240) -> Iterator[Demo]:
    """The demo serving until the block ends, then stopped as Ctrl-C stops it (SIGTERM)."""
    port = free_port()
    stderr = folder / "demo.stderr"
    lines: queue.Queue[str | None] = queue.Queue()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "demo", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )

    def read() -> None:  # to the end, so the pipe never fills
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    printed: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        while READY not in printed:
            left = deadline - time.monotonic()
            assert left > 0, f"the demo printed no {READY!r}:\n" + "\n".join(printed)
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, "the demo exited:\n" + stderr.read_text()[-3000:]
            printed.append(line)
        yield Demo(f"http://127.0.0.1:{port}", printed, stderr, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def newcomer_folder(work: Path) -> Path:
    """Where a newcomer types: the shipped `config/`, a git repository with a change in it (for
    `git diff`, marked RETRY-MARK), and a question.md."""
    shutil.copytree(ROOT / "config", work / "config")
    (work / "question.md").write_text("Does fetch() back off between retries?\n")
    git = ["git", "-c", "user.name=n", "-c", "user.email=n@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    (work / "fetch.py").write_text("def fetch():\n    while True:\n        get()\n")
    subprocess.run([*git, "add", "fetch.py"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "fetch"], cwd=work, check=True)
    (work / "fetch.py").write_text("def fetch():\n    while True:\n        get()  # RETRY-MARK\n")
    return work


def a_real_call(demo: Demo) -> str:
    """A seat's call id from a panel the demo answers now (for an example's placeholder)."""
    body = {"model": "bench/reviewers", "messages": [{"role": "user", "content": "Any bug?"}]}
    reply = httpx.post(f"{demo.url}/v1/chat/completions", json=body, timeout=60).json()
    return str(reply["bench"]["seats"][0]["call"])

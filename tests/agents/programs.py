"""The coding agents as the real programs: the pinned ones in .agents/, each set up from
docs/clients.md's own blocks, and one run of one, with its own HOME and work folder, bounded in
time, its output kept for the failure message.

The blocks are run as a user would paste them (bash, in the work folder), with only the
gateway's address and the collection's name put in: what the doc shows is what is tested.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.clients_doc import DOC_URL, blocks
from tests.helpers.installed import installed

ROOT = Path(__file__).resolve().parents[2]
PINS_FILE = Path(__file__).with_name("agents.toml")
PINS: dict[str, dict[str, object]] = tomllib.loads(PINS_FILE.read_text())
AGENTS_DIR = ROOT / ".agents"
BIN = AGENTS_DIR / "bin"
DOC_COLLECTION = "reviewers"  # the collection every block names; a test puts its own
RUN_TIMEOUT_S = 100.0


@dataclass(frozen=True)
class Setup:
    """An agent's blocks in docs/clients.md: its files (titled by where they go: `~/...` under
    HOME, else in the work folder), the commands for route mode and for a panel, and commands
    that set the agent up before either (Cline's `cline auth`)."""

    files: tuple[str, ...]
    route: str
    panel: str
    first: str = ""


SETUPS = {
    "claude": Setup((), "claude-code-route", "claude-code-panel"),
    "codex": Setup(("~/.codex/config.toml",), "codex-route", "codex-panel"),
    "gemini": Setup(("~/.gemini/settings.json",), "gemini-cli-route", "gemini-cli-panel"),
    "opencode": Setup(("opencode.json",), "opencode-route", "opencode-panel"),
    "qwen": Setup((), "qwen-code-route", "qwen-code-panel"),
    "pi": Setup(("~/.pi/agent/models.json",), "pi-route", "pi-panel"),
    "cn": Setup(("~/.continue/config.yaml", "~/.continue/panel.yaml"), "cn-route", "cn-panel"),
    "cline": Setup((), "cline-route", "cline-panel", first="cline-auth"),
    "aider": Setup((), "aider-route", "aider-panel"),
}


def pinned(agent: str) -> bool:
    """The agent's program is in .agents/bin, installed at its pin."""
    pin = PINS[agent]
    if not (BIN / agent).exists():
        return False
    if "npm" in pin:
        package, version = str(pin["npm"]).rsplit("@", 1)
        manifest = AGENTS_DIR / "lib" / "node_modules" / package / "package.json"
        return manifest.exists() and json.loads(manifest.read_text()).get("version") == version
    dist, version = str(pin["pypi"]).split("==")
    found = f"{dist.replace('-', '_')}-{version}.dist-info"
    return any((AGENTS_DIR / agent / "lib").glob(f"python*/site-packages/{found}"))


def need(agent: str) -> Path:
    """The agent's program; missing, the test skips saying how to get it (fails under CI)."""
    pin = PINS[agent]
    if "npm" in pin:
        how = f"npm install -g --prefix .agents {pin['npm']}"
    else:
        venv = f".agents/{agent}"
        how = (
            f"python3 -m venv {venv} && {venv}/bin/pip install '{pin['pypi']}'"
            f" && ln -s ../{agent}/bin/{agent} .agents/bin/"
        )
    hint = (
        f"{agent} is not installed at its pin: `bash .ci/install-agents` installs every agent of "
        f"tests/agents/agents.toml into .agents/ (this one alone: {how})"
    )
    return Path(installed(str(BIN / agent) if pinned(agent) else None, hint, "coding agents'"))


def settings(title: str, url: str, collection: str) -> str:
    """A block of docs/clients.md, pointed at *url* and *collection*."""
    return blocks()[title].replace(DOC_URL, url).replace(DOC_COLLECTION, collection)


@dataclass
class Run:
    agent: str
    mode: str
    rc: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    work: Path

    def report(self) -> str:
        """What a failing test prints: how the run ended and all it said."""
        ended = "killed at the timeout" if self.rc is None else f"exit {self.rc}"
        return (
            f"\n{self.agent} ({self.mode}): {ended} after {self.seconds:.1f} s"
            f"\n--- stdout\n{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-6000:]}"
        )


def end_left_behind(home: Path) -> None:
    """End what a run left running in a session of its own (Cline's hub daemon): every process
    whose HOME is the run's own, by its id."""
    mine = f"HOME={home}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        if mine in environ:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGKILL)


def run(agent: str, mode: str, url: str, collection: str, base: Path) -> Run:
    """One run of *agent* in *mode* (route or panel) against the gateway at *url*: a new HOME and
    work folder under *base*, the doc's files written, its command run in bash there."""
    setup = SETUPS[agent]
    home, work, tmp = base / "home", base / "work", base / "tmp"
    for folder in (home, work, tmp):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)  # a project, as agents expect
    for title in setup.files:
        place = home / title[2:] if title.startswith("~/") else work / title
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(settings(title, url, collection))
    script = settings(setup.route if mode == "route" else setup.panel, url, collection)
    if setup.first:
        script = settings(setup.first, url, collection) + script
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "PWD": str(work),
        "TMPDIR": str(tmp),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
    }
    began = time.monotonic()
    with open(base / "stdout", "w") as out, open(base / "stderr", "w") as err:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,  # files, not pipes: a helper it leaves behind cannot hold the run open
            stderr=err,
            start_new_session=True,  # its own process group: ended whole, helpers and all
        )
        try:
            rc: int | None = proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            with contextlib.suppress(ProcessLookupError):  # what is left in its group
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            end_left_behind(home)
    seconds = time.monotonic() - began
    ended = "timeout" if rc is None else f"rc={rc}"
    (base / "result").write_text(f"{ended} seconds={seconds:.1f}\n")  # for a look afterwards
    stdout, stderr = ((base / name).read_text(errors="replace") for name in ("stdout", "stderr"))
    return Run(agent, mode, rc, stdout, stderr, seconds, work)

"""Every example `bench-gateway --help` and each command's `--help` prints runs, pasted into bash
as printed, against `bench-gateway demo` (its config: the collections and models it names must
be the demo's).

The client commands reach the demo through `BENCH_GATEWAY_URL`, as their help says; the
commands that read `config/bench.yaml` run in a folder holding a copy of the shipped `config/`
(and a git repository with a change, so `git diff` has something to pipe). Three liberties, each
for a value no example can know: a server's port (a free one, so nothing collides with a gateway
already on 8123), the placeholder call id (a real one from the demo), and the PostgreSQL URL
(this test's own server). `claude mcp add bench -- CMD` registers CMD with Claude Code, which is
not installed here: CMD itself is run, through the official MCP client, as Claude Code would.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from gateway.serve.server import free_port
from tests.helpers.demo import ROOT, Demo, a_real_call, newcomer_folder, running_demo, shell_env

COMMANDS = ("serve", "demo", "simulate", "check-config", "keys", "ask", "verdict", "status",
            "mcp", "store")  # fmt: skip
PLACEHOLDER_CALL = "p1a2b3c4d5e6.member1"
SERVERS = {  # a server example: the line it prints once it serves
    "demo": "Ctrl-C stops the demo.",
    "serve": "Listening on http://",
    "simulate": "Simulated upstream on http://",
}


def help_text(*command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def examples_in(text: str) -> list[str]:
    """The indented lines under `example:` / `examples:`, up to the first blank line."""
    found, inside = [], False
    for line in text.splitlines():
        if line.strip() in ("example:", "examples:"):
            inside = True
        elif inside and line.startswith("  ") and line.strip():
            found.append(line.strip())
        else:
            inside = False
    return found


def every_example() -> list[str]:
    seen: list[str] = []
    for text in (help_text(), *(help_text(command) for command in COMMANDS)):
        seen += [example for example in examples_in(text) if example not in seen]
    return seen


EXAMPLES = every_example()


def word(example: str) -> str:
    """The bench-gateway command an example runs (`ask`, `serve`, ...)."""
    found = re.search(r"bench-gateway (\S+)", example)
    assert found, example
    return found.group(1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("demo")) as served:
        yield served


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return newcomer_folder(tmp_path / "work")


def test_the_examples_cover_every_command():
    assert {word(example) for example in EXAMPLES} == set(COMMANDS)
    assert not any("core" in example.split() or " core " in example for example in EXAMPLES)


def bash(line: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", line],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def serves(line: str, ready: str, folder: Path, env: dict[str, str]) -> None:
    """A server example: it starts, prints *ready*, and stops cleanly on SIGTERM."""
    port = str(free_port())
    line = re.sub(r"--port \d+", f"--port {port}", line)
    if "--port" not in line:
        line = re.sub(r"(bench-gateway \S+)", rf"\1 --port {port}", line, count=1)
    log = folder / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", "-c", f"exec {line}"], cwd=folder, env=env, stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + 240
        while ready not in log.read_text():
            assert proc.poll() is None, f"{line} exited:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"{line} never served:\n{log.read_text()}"
            time.sleep(0.1)
    finally:
        proc.terminate()
        code = proc.wait(60)
    assert code == 0, log.read_text()[-3000:]
    assert "Traceback" not in log.read_text()


async def mcp_tools(command: str, env: dict[str, str], folder: Path) -> list[str]:
    program, *args = shlex.split(command, comments=True)
    server = StdioServerParameters(command=program, args=args, env=env, cwd=str(folder))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [tool.name for tool in (await session.list_tools()).tools]


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_help_example_runs_against_the_demo(example, demo, folder, tmp_path, request):
    env = shell_env(tmp_path / "bin", BENCH_GATEWAY_URL=demo.url)
    command = word(example)
    if command in SERVERS and "--once" not in example:
        return serves(example, SERVERS[command], folder, env)
    line = example.replace(PLACEHOLDER_CALL, a_real_call(demo))
    if command == "store":
        line = line.replace("postgresql://u:p@db/bench", request.getfixturevalue("pg_url"))
        bash("bench-gateway keys create someone", folder, env)  # a store to copy from
    if command == "demo":
        line = f"{line} --port {free_port()}"
    if line.startswith("claude mcp add "):
        tools = asyncio.run(mcp_tools(line.split(" -- ", 1)[1], env, folder))
        assert {"ask", "verdict"} <= set(tools)
        return
    done = bash(line, folder, env)
    assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr
    if command == "ask" and "git diff" in line:  # the piped diff went with the prompt
        panel = re.search(r"`(p[0-9a-f]+)\.\w+`", done.stderr)
        assert panel, done.stderr
        asked = httpx.get(f"{demo.url}/bench/panels/{panel.group(1)}").json()["prompt"]
        assert asked.startswith("Review this diff.") and "RETRY-MARK" in asked

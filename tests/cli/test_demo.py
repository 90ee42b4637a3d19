"""`bench-gateway demo` as a newcomer meets it: a real process, and every command it prints
pasted into bash as printed."""

from __future__ import annotations

import json
import os
import socket
import subprocess

from gateway.serve.server import free_port
from tests.cli.test_main import run
from tests.helpers.demo import running_demo, shell_env


def test_demo_once_prints_every_seat_with_its_call_id_and_leaves_no_files(tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    result = run("demo", "--once", "--port", str(free_port()), timeout=180, env=env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "member1 — kimi" in out and "member2 — qwen-coder" in out
    assert out.count(" · ok · ") >= 3
    assert "/bench/verdict" in out
    assert str(temp) in out  # the records were kept there while it ran
    assert list(temp.iterdir()) == []


def test_demo_on_a_busy_port_says_to_choose_another_and_exits_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("demo", "--once", "--port", str(port), timeout=180)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"port {port} is already in use" in lines[0] and "--port" in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_every_command_the_demo_prints_runs_as_printed_in_bash(tmp_path):
    env = shell_env(tmp_path / "bin")
    with running_demo(tmp_path) as demo:
        commands = demo.commands()
        assert any("/bench/verdict" in c for c in commands), demo.printed
        assert len(commands) >= 4, demo.printed
        replies = []
        for command in commands:
            done = subprocess.run(
                ["bash", "-c", command], capture_output=True, text=True, timeout=60, env=env
            )
            assert done.returncode == 0, (command, done.stderr)
            assert done.stdout.endswith("}\n"), done.stdout  # the prompt on a line of its own
            reply = json.loads(done.stdout)
            refused = isinstance(reply, dict) and isinstance(reply.get("error"), dict)
            assert isinstance(reply, dict) and not refused, (command, done.stdout)
            replies.append((command, reply))
    assert demo.proc.returncode == 0, demo.stderr.read_text()[-3000:]
    verdicts = [reply for command, reply in replies if "/bench/verdict" in command]
    assert [v["recorded"] for v in verdicts] == [True]
    record = next(reply for command, reply in replies if "/bench/calls/" in command)
    assert record["id"] == verdicts[0]["call"] and record["verdict"]["useful"] is True

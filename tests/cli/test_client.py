"""`bench-gateway ask`, `verdict` and `status` end to end: the real command in a subprocess
against a real gateway, piped and on a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.bench import served

ROOT = Path(__file__).parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    return {**env, **extra}


def bench(*args: str, stdin: str | None = None, url: str | None = None):
    command = [sys.executable, "-m", "gateway.cli", *args]
    env = environment(**({"BENCH_GATEWAY_URL": url} if url else {}))
    return subprocess.run(
        command,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


def test_a_piped_prompt_answers_on_stdout_and_the_seats_on_stderr(gateway, sim):
    done = bench("ask", "trio", "--shape", "review", stdin="Is this code right?", url=gateway.url)
    assert done.returncode == 0, done.stderr
    assert "## member1 — alpha" in done.stdout and "| call |" not in done.stdout
    assert "| call | seat | model | status | seconds |" in done.stderr
    calls = re.findall(r"`(p[0-9a-f]+\.\w+)`", done.stderr)
    assert len(calls) >= 3
    panel = gateway.http.get(f"/bench/panels/{calls[0].split('.')[0]}").json()
    assert panel["prompt"].endswith("Is this code right?") and panel["shape"] == "review"
    assert all(r["body"]["messages"][-1]["content"] == "Is this code right?" for r in sim.log())


def test_a_file_prompt_and_json_give_the_full_reply(gateway, tmp_path):
    question = tmp_path / "question.md"
    question.write_text("What does this do?\n\n    x = 1\n", encoding="utf-8")
    done = bench("ask", "solo", "-f", str(question), "--json", "--url", gateway.url)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["bench"]["collection"] == "solo"
    assert {s["status"] for s in reply["bench"]["seats"]} == {"ok"}
    call = reply["bench"]["seats"][0]["call"]
    recorded = gateway.http.get(f"/bench/calls/{call}").json()
    assert recorded["alias"] == reply["bench"]["seats"][0]["alias"]


def test_a_verdict_is_recorded_and_status_shows_models_and_owed_verdicts(gateway):
    asked = bench("ask", "solo", "--json", "hello", url=gateway.url)
    assert asked.returncode == 0, asked.stderr
    seats = json.loads(asked.stdout)["bench"]["seats"]
    owed = bench("status", url=gateway.url)
    assert owed.returncode == 0, owed.stderr
    assert "alpha" in owed.stdout and f"owed verdicts: {len(seats)}" in owed.stdout
    usage = gateway.http.get("/bench/usage").json()  # what status says was spent this month
    assert f"usage {usage['month']}" in owed.stdout
    for entry in usage["models"]:
        assert f"{entry['alias']:<24} {entry['calls']:>6} calls" in owed.stdout
    judged = bench("verdict", seats[0]["call"], "--not-useful", "--note", "off", url=gateway.url)
    assert judged.returncode == 0, judged.stderr
    assert "recorded" in judged.stdout
    verdict = gateway.http.get(f"/bench/calls/{seats[0]['call']}").json()["verdict"]
    assert not verdict["useful"] and verdict["note"] == "off"
    again = bench("status", url=gateway.url)
    assert f"owed verdicts: {len(seats) - 1}" in again.stdout


def test_exit_codes_say_refused_usage_and_no_gateway(gateway, sim):
    refused = bench("ask", "nope", "hi", url=gateway.url)
    assert refused.returncode == 1
    assert "nope" in refused.stderr and "trio" in refused.stderr  # the gateway's own message
    unknown = bench("verdict", "pnope.member1", "--useful", url=gateway.url)
    assert unknown.returncode == 1 and "Unknown call" in unknown.stderr
    no_prompt = bench("ask", "trio", url=gateway.url)
    assert no_prompt.returncode == 2 and "no prompt" in no_prompt.stderr
    bad_flag = bench("verdict", "p1.member1", url=gateway.url)
    assert bad_flag.returncode == 2
    nobody = bench("ask", "trio", "hi", "--url", "http://127.0.0.1:9")
    assert nobody.returncode == 3 and "No gateway answering" in nobody.stderr
    assert "Start one (bench-gateway demo, or serve), or name yours with --url" in nobody.stderr
    assert bench("status", url="http://127.0.0.1:9").returncode == 3
    assert sim.log() == []


def test_on_a_terminal_each_seat_appears_as_it_finishes(gateway, sim):
    """member1 (alpha) answers at once, member2 (gamma) takes seconds: alpha's line and the live
    line naming gamma as the slowest still thinking are on the terminal before gamma finishes."""
    sim.set(served("gamma"), latency_s=4.0)
    command = [sys.executable, "-m", "gateway.cli", "ask", "trio", "hi", "--url", gateway.url]
    env = environment(COLUMNS="160", LINES="40", TERM="xterm-256color")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, stdin=follower, stdout=follower, stderr=follower, cwd=ROOT, env=env
    )
    os.close(follower)
    seen = ""
    fast_seen_at = slow_seen_at = None
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
                seen += ANSI.sub("", chunk)
            if fast_seen_at is None and re.search(r"✓ member1\s+alpha", seen):
                fast_seen_at = time.monotonic()
            if slow_seen_at is None and re.search(r"✓ member2\s+gamma", seen):
                slow_seen_at = time.monotonic()
            if process.poll() is not None and not ready:
                break
    finally:
        os.close(leader)
        process.wait(timeout=30)
    assert process.returncode == 0, seen
    assert fast_seen_at is not None and slow_seen_at is not None, seen
    assert fast_seen_at < slow_seen_at
    before_slow = seen[: seen.index("✓ member2")]
    assert "slowest still thinking: member2 (gamma)" in before_slow
    assert re.search(r"\d/\d seats done", before_slow)


def test_the_verdict_line_ask_prints_runs_as_printed(gateway, tmp_path):
    from tests.helpers.demo import shell_env

    done = bench("ask", "trio", "Is this code right?", url=gateway.url)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    line = lines[lines.index("judge a seat with:") + 1].strip()
    env = shell_env(tmp_path / "bin", BENCH_GATEWAY_URL=gateway.url)
    judged = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env)
    assert judged.returncode == 0, judged.stderr
    assert judged.stdout.startswith("verdict on ") and "recorded" in judged.stdout


def test_a_panel_where_every_seat_failed_shows_each_seats_class_and_message(make_gateway, sim):
    from tests.helpers.bench import quiet_raw

    gateway = make_gateway(quiet_raw(sim.url))
    sim.set(served("alpha"), status=404, error_message="The model `sim-alpha` does not exist")
    sim.set(
        served("gamma"),
        status=404,
        error_message="No endpoints found matching your data policy (Free model publication)",
    )
    sim.set(served("delta"), status=402, error_message="Insufficient credit | add more")
    done = bench("ask", "trio", "hi", url=gateway.url)
    assert done.returncode == 1, done.stderr  # refused: no seat answered
    rows = {line.split("|")[3].strip(): line for line in done.stderr.splitlines() if "`p" in line}
    assert "error · gone: " in rows["alpha"] and "`sim-alpha` does not exist" in rows["alpha"]
    assert "error · entitlement: " in rows["gamma"] and "data policy" in rows["gamma"]
    assert (
        "error · entitlement: " in rows["delta"]
        and "Insufficient credit / add more" in rows["delta"]
    )

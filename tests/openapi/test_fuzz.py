"""schemathesis, the third-party API fuzzer, with every check (positive and negative data,
status codes, Allow headers, response schemas, auth) against a real gateway on loopback whose
members are the simulator, with keys and without: `/openapi.json` says what the server enforces
and the server keeps to it (contract §17). Every operation is fuzzed, the two that answer
with event streams (`POST /mcp`, `GET /ui/events`) in short runs of their own. The runs go
side by side, each bounded (`--max-time`): a minute in all.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.bench import bench_raw

# Per run; the two run side by side. `--max-time` is a budget, not a cap: schemathesis shares it
# among its phases so that each phase reaches every operation, and repeats fuzzing and stateful
# runs until it is spent. 60 s still covers every operation in the coverage and fuzzing phases
# (and runs the stateful phase) with every check on, on a loaded two-core machine; what a larger
# budget bought was more random cases for the same operations (~2,150 in 120 s, ~780 in 45 s), at
# two cores' worth of the suite's time. `every_operation_tested` holds the budget to that.
MAX_TIME_S = 60
# The two operations that answer with event streams have short runs of their own, one per
# gateway, beside the long ones (which leave them out), so that the long runs' budget goes to
# the other operations as before. schemathesis reads an event stream until `max-stream-events`
# events or the request timeout; `/ui/events` stays open as long as its page does and sends its
# `hello` at once, so it is read up to that one event (STREAMS_CONFIG): every case is quick,
# and its event checked against its schema. `/mcp`'s streams end with their answer. Their
# coverage phase alone took 6 s of a 10 s budget on a loaded machine, and once did not reach
# both operations in it: 20 s.
STREAMED = "^/(mcp|ui/events)$"
STREAMS_MAX_TIME_S = 20
STREAMS_CONFIG = """
[[operations]]
include-path = "/ui/events"
max-stream-events = 1
"""
KEY = "bwk_" + "f" * 43


def schemathesis() -> str:
    """The `st` of this environment (the test extras install it), else one on PATH."""
    beside = Path(sys.executable).with_name("st")
    found = str(beside) if beside.exists() else shutil.which("st")
    if found is None:
        pytest.skip("schemathesis is not installed: pip install -e '.[test]'")
    return found


def fuzz(url: str, where: Path, streams: bool, *options: str) -> subprocess.Popen[str]:
    """One bounded run, started: of the streaming operations (*streams*), else of the others;
    *where*: its working folder (schemathesis keeps a cache there)."""
    where.mkdir()
    (where / "schemathesis.toml").write_text(STREAMS_CONFIG)
    if streams:  # (no links among them: nothing for the stateful phase)
        chosen = ["--include-path-regex", STREAMED, "--phases", "examples,coverage,fuzzing"]
    else:
        chosen = ["--exclude-path-regex", STREAMED]
    return subprocess.Popen(
        [
            schemathesis(),
            "--config-file",
            "schemathesis.toml",
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            "15",
            "--max-time",
            str(STREAMS_MAX_TIME_S if streams else MAX_TIME_S),
            "--workers",
            "1",
            "--seed",
            "1",
            "--request-timeout",
            "30",
            *chosen,
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=where,
    )


def test_schemathesis_finds_nothing_on_a_gateway_with_keys_or_without(make_gateway, sim, tmp_path):
    """The runs at once (each bounded by time, not by cases), so the suite waits for one."""
    import asyncio

    from gateway.access.keys import key_record

    open_gw = make_gateway(bench_raw(sim.url))
    keyed = make_gateway(bench_raw(sim.url, require_keys=True))
    asyncio.run(_add_key(keyed, key_record("fuzz", KEY, None, None)))
    auth = ("--header", f"Authorization: Bearer {KEY}")
    runs = {
        "without keys": fuzz(open_gw.url, tmp_path / "open", False),
        "with keys": fuzz(keyed.url, tmp_path / "keyed", False, *auth),
        "streams without keys": fuzz(open_gw.url, tmp_path / "open-streams", True),
        "streams with keys": fuzz(keyed.url, tmp_path / "keyed-streams", True, *auth),
    }
    try:
        printed = {name: run.communicate(timeout=MAX_TIME_S * 3) for name, run in runs.items()}
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
    for name, (out, err) in printed.items():
        assert runs[name].returncode == 0, f"{name}:\n" + out[-20000:] + err[-2000:]
        every_operation_tested(name, out)


def every_operation_tested(name: str, out: str) -> None:
    """The budget reached every operation selected, in the coverage phase and in fuzzing."""
    selected = re.search(r"Selected: (\d+)/\d+", out)
    assert selected, f"{name}: no summary\n" + out[-5000:]
    for phase in ("Coverage", "Fuzzing"):
        found = re.search(rf" {phase} \(in [\d.]+s\)\n\n(.*?)\n\n", out, re.S)
        assert found, f"{name}: no {phase} phase\n" + out[-5000:]
        assert found[1].split()[1:] == [selected[1], "passed"], f"{name}, {phase}: {found[1]}"


async def _add_key(gw, record) -> None:
    from gateway.store.open import open_store

    store = open_store(gw.config.store)
    await store.open()
    try:
        await store.add_key(record)
    finally:
        await store.close()

"""schemathesis, the third-party API fuzzer, with every check (positive and negative data,
status codes, Allow headers, response schemas, auth) against a real gateway on loopback whose
members are the simulator, with keys and without: `/openapi.json` says what the server enforces
and the server keeps to it (contract §17). A bounded run (`--max-time`), a few minutes in all.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.bench import bench_raw

MAX_TIME_S = 120  # per run; the two run side by side
# Described, but not fuzzed: schemathesis cannot speak their protocols. `/mcp` is MCP's
# streamable HTTP (JSON-RPC messages in the SDK's sessions: a random object is only ever a 400
# or 406 there, and its replies are event streams), and `/ui/events` is an event stream that
# stays open as long as its page does (every case would end in the request timeout).
NOT_FUZZED = "^/(mcp|ui/events)$"
KEY = "bwk_" + "f" * 43


def schemathesis() -> str:
    """The `st` of this environment (the test extras install it), else one on PATH."""
    beside = Path(sys.executable).with_name("st")
    found = str(beside) if beside.exists() else shutil.which("st")
    if found is None:
        pytest.skip("schemathesis is not installed: pip install -e '.[test]'")
    return found


def fuzz(url: str, where: Path, *options: str) -> subprocess.Popen[str]:
    """One bounded run, started; *where*: its working folder (schemathesis keeps a cache there)."""
    where.mkdir()
    return subprocess.Popen(
        [
            schemathesis(),
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            "15",
            "--max-time",
            str(MAX_TIME_S),
            "--workers",
            "1",
            "--seed",
            "1",
            "--request-timeout",
            "30",
            "--exclude-path-regex",
            NOT_FUZZED,
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=where,
    )


def test_schemathesis_finds_nothing_on_a_gateway_with_keys_or_without(make_gateway, sim, tmp_path):
    """The two runs at once (each bounded by time, not by cases), so the suite waits for one."""
    import asyncio

    from gateway.access.keys import key_record

    open_gw = make_gateway(bench_raw(sim.url))
    keyed = make_gateway(bench_raw(sim.url, require_keys=True))
    asyncio.run(_add_key(keyed, key_record("fuzz", KEY, None, None)))
    runs = {
        "without keys": fuzz(open_gw.url, tmp_path / "open"),
        "with keys": fuzz(
            keyed.url, tmp_path / "keyed", "--header", f"Authorization: Bearer {KEY}"
        ),
    }
    try:
        printed = {name: run.communicate(timeout=MAX_TIME_S * 3) for name, run in runs.items()}
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
    for name, (out, err) in printed.items():
        assert runs[name].returncode == 0, f"{name}:\n" + out[-20000:] + err[-2000:]


async def _add_key(gw, record) -> None:
    from gateway.store.open import open_store

    store = open_store(gw.config.store)
    await store.open()
    try:
        await store.add_key(record)
    finally:
        await store.close()

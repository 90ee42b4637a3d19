"""A hostile upstream echoing the provider key the config references (`os.environ/NAME`): masked
as `…` plus its last four characters in every answer (panel seats and route turns, plain and
streamed, the key split across stream chunks), in the records, the dashboard, errors and the
log of a served gateway."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest
import yaml

from tests.cli.test_main import free_port, wait_healthy
from tests.helpers.bench import quiet_raw, served
from tests.helpers.route import WEATHER

ROOT = Path(__file__).parents[2]
SECRET = "sk-live-0123456789abcdefghijklmnopqrstuvWXYZ"
SHOWN = "…WXYZ"
SHOWN_IN_JSON = "\\u2026WXYZ"  # as json.dumps writes it
ECHO = f"Here is the key you use: {SECRET} (keep it safe)."


def raw_with_secret(sim_url: str, **gateway) -> dict:
    raw = quiet_raw(sim_url, **gateway)
    for entry in raw["model_list"]:
        entry["litellm_params"]["api_key"] = "os.environ/BENCH_TEST_PROVIDER_KEY"
    raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
    return raw


@pytest.fixture
def hostile(make_gateway, sim, monkeypatch):
    monkeypatch.setenv("BENCH_TEST_PROVIDER_KEY", SECRET)
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), answer=ECHO, chunk_chars=5)  # split across chunks when streamed
    return make_gateway(raw_with_secret(sim.url, route_explore=0))


def stored(gw) -> bytes:
    store = Path(gw.config.store.removeprefix("sqlite:///"))
    with contextlib.closing(sqlite3.connect(store)) as db:
        db.execute("PRAGMA wal_checkpoint(FULL)")
    return b"".join(p.read_bytes() for p in store.parent.glob(store.name + "*"))


def test_an_echoed_key_is_masked_in_a_panels_answers_records_and_dashboard(hostile, sim):
    assert sim.log() == [] and hostile.config.secrets == (SECRET,)
    completion, raw = hostile.ask("bench/trio")
    content = completion.choices[0].message.content
    seats = completion.model_extra["bench"]["seats"]
    assert SECRET not in raw.http_response.text
    assert content.count(SHOWN) == 3 and all(SHOWN in s["answer"] for s in seats)

    streamed = hostile.client.chat.completions.create(
        model="bench/trio", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
    assert SECRET not in text and text.count(SHOWN) == 3

    call = seats[0]["call"]
    assert SHOWN in hostile.http.get(f"/bench/calls/{call}").json()["answer"]
    page = hostile.http.get("/")
    assert page.status_code == 200 and SECRET not in page.text and SHOWN in page.text
    assert SECRET.encode() not in stored(hostile)


def test_an_echoed_key_split_across_a_route_streams_chunks_is_masked(hostile, sim):
    stream = hostile.client.chat.completions.create(
        model="bench/crew", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert len([p for p in pieces if p]) > 5  # it came in pieces, the key across several
    assert "".join(pieces) == ECHO.replace(SECRET, SHOWN)  # whole, nothing lost, masked
    assert all(SECRET[:8] not in piece for piece in pieces)

    plain, raw = hostile.ask("bench/crew")
    assert plain.choices[0].message.content == ECHO.replace(SECRET, SHOWN)
    assert SECRET not in raw.http_response.text
    assert SECRET.encode() not in stored(hostile)


def test_an_echoed_key_in_a_route_turns_tool_call_arguments_is_masked(hostile, sim):
    for alias in ("alpha", "gamma"):
        sim.set(served(alias), tool_call={"name": "weather", "arguments": {"city": SECRET}})
    for stream in (False, True):
        reply = hostile.http.post(
            "/v1/chat/completions",
            json={
                "model": "bench/crew",
                "messages": [{"role": "user", "content": "weather?"}],
                "tools": [WEATHER],
                "stream": stream,
            },
        )
        assert reply.status_code == 200 and SECRET not in reply.text
        assert SHOWN in reply.text or SHOWN_IN_JSON in reply.text
    assert SECRET.encode() not in stored(hostile)


def test_an_upstream_error_echoing_the_key_is_masked_in_the_seat_and_the_reply(hostile, sim):
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), status=401, error_message=f"Incorrect API key provided: {SECRET}")
    with pytest.raises(openai.APIStatusError) as failed:
        hostile.ask("bench/trio")
    body = failed.value.response.text
    assert failed.value.status_code == 502 and SECRET not in body
    assert SHOWN in failed.value.response.json()["bench"]["seats"][0]["error"]
    assert SECRET.encode() not in stored(hostile)


def test_a_served_gateways_log_and_errors_mask_the_key(sim, tmp_path):
    """The real `serve`: a request whose path carries the key (a pasted link) is logged and
    answered with it masked."""
    raw = raw_with_secret(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'served.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    port, log = free_port(), tmp_path / "serve.log"
    env = {**os.environ, "BENCH_TEST_PROVIDER_KEY": SECRET}
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*argv, "--port", str(port), "--workers", "1"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base)
        missing = httpx.get(f"{base}/bench/calls/{SECRET}", timeout=30)
        assert missing.status_code == 404
        assert SECRET not in missing.text and SHOWN in missing.text
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
    served_log = log.read_text()
    assert f"GET /bench/calls/{SHOWN} 404" in served_log
    assert SECRET not in served_log

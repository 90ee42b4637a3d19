"""A key flooding the verdict store (docs/reliability.md, N5): each verdict that differs was a new
row with no bound (200 verdicts of ~0.8 MB in 3 s: +166 MB). A verdict's size is bounded as the
API document states, a call keeps its newest verdicts only, and each judge gives at most
VERDICTS_PER_MINUTE a minute."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
import yaml

from gateway.records.verdicts import MAX_CLAIM, MAX_CLAIMS, MAX_NOTE, VERDICTS_PER_MINUTE
from gateway.store.statements import VERDICTS_KEPT
from tests.helpers.bench import quiet_raw
from tests.helpers.clocks import ManualClock

ROOT = Path(__file__).parents[2]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(time.time())


@pytest.fixture
def flooder(make_gateway, sim, tmp_path, clock):
    """A keyed gateway, a key (`keyA`, no rpm) and one of its own calls."""
    raw = quiet_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    made = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "keys", "create", "keyA", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    gw = make_gateway(raw, clock=clock.now)
    gw.http.headers["x-api-key"] = key
    asked = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert asked.status_code == 200, asked.text
    return gw, asked.json()["bench"]["seats"][0]["call"]


def _rows(gw, call: str) -> int:
    with sqlite3.connect(gw.config.store.removeprefix("sqlite:///")) as db:
        found = db.execute("SELECT COUNT(*) FROM verdicts WHERE call_id = ?", (call,))
        return int(found.fetchone()[0])


def test_a_verdict_past_its_stated_bounds_is_refused_naming_the_field_and_the_limit(flooder):
    gw, call = flooder
    too_much = {
        "note": "n" * (MAX_NOTE + 1),
        "real": ["c"] * (MAX_CLAIMS + 1),
        "false": ["c" * (MAX_CLAIM + 1)],
    }
    for field, value in too_much.items():
        refused = gw.http.post("/bench/verdict", json={"call": call, "useful": True, field: value})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        limit = {"note": MAX_NOTE, "real": MAX_CLAIMS, "false": MAX_CLAIM}[field]
        assert error["param"] == field and str(limit) in error["message"]
    assert _rows(gw, call) == 0  # nothing written
    schema = gw.http.get("/openapi.json").json()["components"]["schemas"]["Verdict"]
    assert schema["properties"]["note"]["maxLength"] == MAX_NOTE
    assert schema["properties"]["real"]["maxItems"] == MAX_CLAIMS
    assert schema["properties"]["false"]["items"]["maxLength"] == MAX_CLAIM
    at_the_limits = {
        "call": call,
        "useful": True,
        "note": "n" * MAX_NOTE,
        "real": ["r" * MAX_CLAIM] * MAX_CLAIMS,
        "false": ["f" * MAX_CLAIM] * MAX_CLAIMS,
    }
    assert gw.http.post("/bench/verdict", json=at_the_limits).status_code == 200


def test_a_flood_of_changing_verdicts_is_429_past_its_minute_and_keeps_a_bounded_history(
    flooder, clock
):
    gw, call = flooder

    def verdict(i: int) -> dict:
        """As large as a verdict may be, and different from the one before (useful flips)."""
        claims = [f"{i}-{n}".ljust(MAX_CLAIM, "c") for n in range(MAX_CLAIMS)]
        note = f"{i}".ljust(MAX_NOTE, "n")
        return {"call": call, "useful": i % 2 == 0, "note": note, "real": claims, "false": claims}

    replies = [gw.http.post("/bench/verdict", json=verdict(i)) for i in range(200)]
    statuses = [r.status_code for r in replies]
    assert statuses == [200] * VERDICTS_PER_MINUTE + [429] * (200 - VERDICTS_PER_MINUTE)
    refused = replies[-1]
    assert 1 <= int(refused.headers["Retry-After"]) <= 61
    assert refused.json()["error"]["code"] == "too_many_verdicts"
    assert "keyA" in refused.json()["error"]["message"]
    assert _rows(gw, call) == VERDICTS_KEPT  # the newest only
    current = gw.http.get(f"/bench/calls/{call}").json()["verdict"]
    assert current["note"] == verdict(VERDICTS_PER_MINUTE - 1)["note"]

    clock.advance(61)  # its minute is over: it may judge again, and the history stays bounded
    assert gw.http.post("/bench/verdict", json=verdict(1000)).status_code == 200
    assert _rows(gw, call) == VERDICTS_KEPT
    assert gw.http.get(f"/bench/calls/{call}").json()["verdict"]["useful"] is True


def test_on_postgresql_a_call_keeps_its_newest_verdicts(make_gateway, pg_url):
    gw = make_gateway(store=pg_url)
    call = gw.ask("bench/trio")[0].bench["seats"][0]["call"]
    for i in range(VERDICTS_KEPT + 5):  # without keys: not counted, but kept bounded
        sent = {"call": call, "useful": i % 2 == 0, "note": f"verdict {i}"}
        assert gw.http.post("/bench/verdict", json=sent).json()["recorded"] is True
    with psycopg.connect(pg_url) as db:
        notes = db.execute(
            "SELECT note FROM verdicts WHERE call_id = %s ORDER BY id", (call,)
        ).fetchall()
    assert [n for (n,) in notes] == [f"verdict {i}" for i in range(5, VERDICTS_KEPT + 5)]
    assert gw.http.get(f"/bench/calls/{call}").json()["verdict"]["note"] == (
        f"verdict {VERDICTS_KEPT + 4}"
    )

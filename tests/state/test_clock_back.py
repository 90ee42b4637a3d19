"""A wall clock set back (an NTP step, a VM restored, a hand mistake) costs a minute at most: an
rpm window (a model's, a key's) or a sign-in lock-out whose start now lies in the future is
counted from now, so it ends a minute later rather than when the clock catches up with it (a
day later, for a clock set back a day). The gateway runs on a clock the test sets back, on its
own board and on Redis; the requests are real."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gateway.access.sessions import ADMIN_TOKEN_ENV, SESSION_COOKIE
from tests.helpers.bench import bench_raw
from tests.helpers.clocks import ManualClock

DAY_S = 86_400.0
ROOT = Path(__file__).parents[2]
TOKEN = "the-admin-token-of-this-test"
QUESTION = [{"role": "user", "content": "Is this retry loop safe?"}]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(time.time())


@pytest.fixture(params=["board", "redis"])
def state(request) -> str | None:
    """Where the windows live: the gateway's own board, or Redis (replicas)."""
    return request.getfixturevalue("redis_url") if request.param == "redis" else None


def _ask(gw, headers: dict[str, str] | None = None) -> int:
    body = {"model": "bench/solo", "messages": QUESTION}
    return gw.http.post("/v1/chat/completions", json=body, headers=headers or {}).status_code


def test_a_models_rpm_window_ends_a_minute_after_the_clock_is_set_back_a_day(
    make_gateway, sim, clock, state
):
    raw = bench_raw(sim.url, max_explorers=0, reserves=0)
    raw["model_list"][0]["bench"]["rpm"] = 1  # alpha
    raw["collections"]["solo"] = {"members": ["alpha"]}
    gw = make_gateway(raw, clock=clock.now, state=state)
    assert [_ask(gw), _ask(gw)] == [200, 429]  # the minute's one call is spent

    clock.advance(-DAY_S)
    assert _ask(gw) == 429  # the call still counts, from now: the cap holds across the step
    clock.advance(61)
    assert _ask(gw) == 200  # before: 429 until the clock had caught up, a day later


def test_a_keys_rpm_window_ends_a_minute_after_the_clock_is_set_back_a_day(
    make_gateway, sim, clock, state, tmp_path
):
    raw = bench_raw(sim.url, require_keys=True, max_explorers=0, reserves=0)
    raw["collections"]["solo"] = {"members": ["alpha"]}
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    created = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "keys", "create", "slow", "--rpm", "1",
         "--config", str(config)],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=True,
    )  # fmt: skip
    key = {"Authorization": f"Bearer {created.stdout.strip()}"}
    gw = make_gateway(raw, clock=clock.now, state=state)
    assert [_ask(gw, key), _ask(gw, key)] == [200, 429]

    clock.advance(-DAY_S)
    assert _ask(gw, key) == 429
    clock.advance(61)
    assert _ask(gw, key) == 200


def test_a_sign_in_lock_out_ends_a_minute_after_the_clock_is_set_back_a_day(
    make_gateway, monkeypatch, clock
):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    gw = make_gateway(require_keys=True, clock=clock.now)
    csrf = {"X-CSRF-Token": "t"}

    def sign_in(token: str):
        return gw.http.post("/ui/signin", json={"token": token}, headers=csrf)

    gw.http.cookies.set("bench_csrf", "t")
    assert [sign_in(f"guess-{i}").status_code for i in range(11)] == [401] * 10 + [429]

    clock.advance(-DAY_S)
    assert sign_in(TOKEN).status_code == 429  # still locked out, for a minute from now
    clock.advance(61)
    right = sign_in(TOKEN)
    assert right.status_code == 200 and SESSION_COOKIE in right.cookies  # before: 429 a day

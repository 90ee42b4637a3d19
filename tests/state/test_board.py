"""The board the workers share: exact under many processes, and one gateway's facts in all of them.

The first tests drive the board from real processes at once. The rest run two gateways on one
board file and one store, as `serve --workers 2` does, and ask each in turn: what one learns or
spends, the other sees.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gateway.board import Board
from tests.helpers.bench import POOL, bench_raw, explorers, pool_raw, served
from tests.helpers.board_workers import (
    HANG_S,
    SPAWN,
    add_many,
    processes,
    run,
    take_and_die,
    take_many,
)

CAP = 25
# Enough work that the processes' turns overlap for most of it: a board without its lock loses
# adds and overruns this cap in every run (tried), where 300 adds and a cap of 25 did not.
ADDS, MANY = 20_000, 500


@pytest.fixture
def board_file(tmp_path) -> Path:
    path = tmp_path / "board"
    Board.create(path)
    return path


def test_a_cap_is_never_overrun_by_processes_taking_slots_at_once(board_file):
    results = SPAWN.Queue()
    now = time.time()
    with processes(take_many, (str(board_file), now, MANY, MANY // 2, results)):
        taken = [results.get(timeout=HANG_S) for _ in range(4)]
    assert sum(taken) == MANY  # twice as many tries as slots
    assert Board.attach(board_file).used("model:x", MANY, now) == MANY


def test_counts_added_by_processes_at_once_are_all_kept(board_file):
    run(add_many, (str(board_file), ADDS))
    assert Board.attach(board_file).numbers("counted") == (4.0 * ADDS, 8.0 * ADDS)


def test_a_call_still_in_flight_counts_past_its_minute_unless_its_worker_died(board_file):
    board = Board.attach(board_file)
    now = time.time()
    run(take_and_die, (str(board_file), now, CAP), n=1)
    mine = board.take([("model:x", CAP)], now)
    assert board.used("model:x", CAP, now) == 2
    # a minute on, the dead worker's call no longer counts; this live one's still does
    assert board.used("model:x", CAP, now + 61) == 1
    board.release(mine, now + 62)
    assert board.used("model:x", CAP, now + 62) == 0


def test_names_of_any_length_keep_their_own_cells():
    board = Board.private(cells=16, slots=16)
    long_a, long_b = "x" * 200 + "a", "x" * 200 + "b"
    board.write(long_a, 1)
    board.write(long_b, 2, text="é" * 100)
    assert board.numbers(long_a)[0] == 1 and board.numbers(long_b)[0] == 2
    assert board.text(long_b) == "é" * 64  # clipped to 128 bytes, whole characters only


# --- two gateways on one board, as two workers ------------------------------------------------


@pytest.fixture
def workers(make_gateway, tmp_path):
    """make(raw) -> two gateways sharing one board file and one store."""
    path = tmp_path / "board"
    Board.create(path)

    def make(raw):
        return make_gateway(raw, board=path), make_gateway(raw, board=path)

    return make


def duo(sim_url: str) -> dict:
    raw = bench_raw(sim_url, max_explorers=0, reserves=3)
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"], "shape": "review"}
    return raw


def first_seat(completion) -> dict:
    return completion.model_extra["bench"]["seats"][0]


def test_a_model_cooled_by_one_worker_is_not_called_by_the_other(workers, sim):
    one, two = workers(duo(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30)
    assert first_seat(one.ask("bench/duo")[0])["status"] == "rate_limited"

    seat = first_seat(two.ask("bench/duo")[0])
    assert (seat["status"], seat["seconds"]) == ("cooling", 0.0)
    assert "429" in seat["error"]
    assert len(sim.log(served("alpha"))) == 1
    row = next(m for m in two.http.get("/bench/models").json()["models"] if m["alias"] == "alpha")
    assert row["cooling_until"] - time.time() == pytest.approx(30, abs=3)


def test_an_rpm_cap_counts_the_calls_of_every_worker(workers, sim):
    raw = duo(sim.url)
    raw["model_list"][0]["bench"]["rpm"] = 2  # alpha
    one, two = workers(raw)
    assert first_seat(one.ask("bench/duo")[0])["status"] == "ok"
    assert first_seat(two.ask("bench/duo")[0])["status"] == "ok"

    seat = first_seat(one.ask("bench/duo")[0])
    assert seat["status"] == "cooling" and "rpm cap (2/min" in seat["error"]
    assert len(sim.log(served("alpha"))) == 2


def test_a_key_rpm_counts_requests_to_every_worker(workers, sim, tmp_path):
    raw = bench_raw(sim.url, require_keys=True)
    one, two = workers(raw)
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump({**raw, "store": f"sqlite:///{tmp_path / 'records.db'}"}))
    argv = [sys.executable, "-m", "gateway.cli", "keys", "create", "slow", "--rpm", "2"]
    made = subprocess.run([*argv, "--config", str(config)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    headers = {"authorization": f"Bearer {made.stdout.strip()}"}
    body = {"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]}

    def post(gw) -> int:
        return gw.http.post("/v1/chat/completions", json=body, headers=headers).status_code

    assert [post(one), post(two), post(one), post(two)] == [200, 200, 429, 429]


def test_explorers_rotate_across_workers_as_in_one(workers, sim):
    one, two = workers(pool_raw(sim.url))
    seen = [explorers(gw.ask("bench/anchored")[0]) for gw in (one, two, one)]
    assert sorted(a for pair in seen for a in pair) == sorted(POOL)


def test_a_verdict_sent_to_one_worker_counts_in_the_other(workers, sim):
    one, two = workers(bench_raw(sim.url))
    completion, _ = one.ask("bench/solo")
    call = first_seat(completion)["call"]
    sent = two.http.post("/bench/verdict", json={"call": call, "useful": True})
    assert sent.status_code == 200
    row = next(m for m in one.http.get("/bench/models").json()["models"] if m["alias"] == "alpha")
    assert (row["seated"], row["answered"], row["useful"], row["judged"]) == (1, 1, 1, 1)


def test_a_full_board_says_so_instead_of_overwriting():
    from gateway.board import BoardFull

    board = Board.private(cells=1, slots=4)
    board.write("a", 1)
    with pytest.raises(BoardFull):
        board.write("b", 2)
    assert board.numbers("a") == (1.0, 0.0)
    small = Board.private(cells=8, slots=4)
    assert small.take([("model:x", 4)], time.time()) != "model:x"
    with pytest.raises(BoardFull):
        small.take([("model:y", 1)], time.time())

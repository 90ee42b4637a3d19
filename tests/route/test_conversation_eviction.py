"""Attack N35 through the real gateway with keys required: one key's flood of new route
conversations evicts only its own. key-a's conversation keeps its member, its id and its turn
numbering while key-b starts more conversations than key-a's set of the table holds, on a
board two workers share and in Redis two gateways share.

A conversation can only be evicted from its own set (gateway/state/conversations.py), so key-b
floods key-a's set: the sessions it names are picked to land there, twice the set's size, as
a flood of the whole table would with some 3,000 turns instead of 16 (the state tests,
tests/state/test_conversations.py, flood the whole table).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gateway.board import Board
from gateway.route.start import SESSION
from gateway.state.conversations import WAYS, cells_of
from tests.helpers.bench import bench_raw
from tests.helpers.route import CALL

ROOT = Path(__file__).parents[2]
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(params=["board", "redis"])
def pair(request, make_gateway, sim, tmp_path):
    """(two gateways sharing the live state and the store, keys for key-a and key-b)."""
    raw = bench_raw(sim.url, route_explore=0, first_token_s=2, require_keys=True)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, tool_call=CALL, latency_s=0.01)
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    keys = {name: _create_key(config, name) for name in ("key-a", "key-b")}
    store = tmp_path / "records.db"
    if request.param == "board":
        board = tmp_path / "board"
        Board.create(board)
        one, two = (make_gateway(raw, store=store, board=board) for _ in range(2))
    else:
        redis_url = request.getfixturevalue("redis_url")
        one, two = (make_gateway(raw, store=store, state=redis_url) for _ in range(2))
    return one, two, keys


def _create_key(config: Path, name: str) -> str:
    command = [sys.executable, "-m", "gateway.cli", "keys", "create", name, "--config", str(config)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def turn(gateway, key: str, session: str) -> tuple[dict, str]:
    headers = {"authorization": f"Bearer {key}", "X-Bench-Conversation": session}
    body = {"model": "bench/crew:route", "messages": HI}
    response = gateway.http.post("/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["bench"], response.headers["x-bench-conversation"]


def sessions_beside(key_a_session: str, count: int) -> list[str]:
    """*count* of key-b's sessions in key-a's set of the conversation table."""
    target = cells_of(("crew", "key-a", SESSION, key_a_session))
    names = (f"flood-{n}" for n in range(1_000_000))
    beside = (s for s in names if cells_of(("crew", "key-b", SESSION, s)) == target)
    return [next(beside) for _ in range(count)]


def test_one_keys_flood_of_conversations_leaves_another_keys_conversation_whole(pair, sim):
    one, two, keys = pair
    sim.set("sim-alpha", status=503, fail_times=1)  # key-a's conversation goes to gamma
    first, header = turn(one, keys["key-a"], "task-a")
    assert (first["alias"], first["turn"]) == ("gamma", 1)

    flood = sessions_beside("task-a", 2 * WAYS)
    for session in flood:  # each a new conversation, on the other worker
        assert turn(two, keys["key-b"], session)[0]["turn"] == 1

    later, later_header = turn(one, keys["key-a"], "task-a")
    assert (later["conversation"], later["turn"], later["alias"]) == (
        first["conversation"], 2, "gamma",
    )  # fmt: skip
    assert later_header == header == first["conversation"]
    newest, _ = turn(two, keys["key-b"], flood[-1])  # the flood's newest are its own to keep
    assert newest["turn"] == 2

"""An upstream's absurd `usage` (a string, a list, a number past 2**63, a negative or fractional
count, no object at all) costs nothing but the counts: the seat is answered and recorded with
its counts unknown (0), the panel's other seats are answered, and `/healthz` stays ok, on panels
and route turns (plain and streamed), through either reader, in SQLite and PostgreSQL.

The answers are replayed byte for byte by the simulator; the gateway, its readers and both
stores are real."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.tokens import MOST_TOKENS
from tests.helpers.bench import bench_raw
from tests.helpers.clocks import wait_until

ANSWER = "The loop never backs off."
QUESTION = [{"role": "user", "content": "Is this retry loop safe?"}]

# name -> the `usage` the upstream sends
USAGES: dict[str, Any] = {
    "strings": {"prompt_tokens": "lots", "completion_tokens": "many", "total_tokens": "all"},
    "lists": {"prompt_tokens": [1, 2], "completion_tokens": [3], "total_tokens": []},
    "past 2**63": {"prompt_tokens": 2**63 + 5, "completion_tokens": 2**64 + 7, "total_tokens": 1},
    "a googol": {"prompt_tokens": 10**100, "completion_tokens": 3, "total_tokens": 10**100 + 3},
    "negative and fractional": {"prompt_tokens": -5, "completion_tokens": 2.5},
    "not an object": "lots",
}
# litellm's own types refuse these (pydantic: not an integer), so through litellm the call fails
# inside litellm before the gateway sees the answer: the seat is a recorded error, as for any
# upstream failure, and the others answer. (A usage that is no object fails a plain answer
# there too; a stream's is passed over.) The direct reader reads them all.
LITELLM_REFUSES = {"strings", "lists", "negative and fractional"}
SANE = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}


def _plain(usage: Any) -> dict[str, Any]:
    """A whole chat answer carrying *usage*, as an upstream writes it."""
    body = {
        "id": "chatcmpl-u", "object": "chat.completion", "created": 7, "model": "u",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER},
                     "finish_reason": "stop"}],
        "usage": usage,
    }  # fmt: skip
    return {"content_type": "application/json", "parts": [json.dumps(body)]}


def _streamed(usage: Any) -> dict[str, Any]:
    """The same answer streamed, *usage* on its last chunk (as `include_usage` asks)."""

    def event(choices: list[dict[str, Any]], **extra: Any) -> str:
        base = {"id": "chatcmpl-u", "object": "chat.completion.chunk", "created": 7}
        return "data: " + json.dumps({**base, "model": "u", "choices": choices, **extra}) + "\n\n"

    parts = [
        event([{"index": 0, "delta": {"role": "assistant", "content": ANSWER}}]),
        event([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        event([], usage=usage),
        "data: [DONE]\n\n",
    ]
    return {"parts": parts}


@pytest.fixture(params=["sqlite", "postgresql"])
def store_of(request, tmp_path):
    """Where the records go: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "records.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture(params=["direct", "litellm"])
def gateway_for(request, make_gateway, sim, store_of):
    """A gateway reading its members by the given reader, recording in the given store: a
    panel `pair` (alpha answers as scripted, gamma plainly) and a route collection `solo`."""
    raw = bench_raw(
        sim.url, upstream_reader=request.param, max_explorers=0, reserves=0, route_explore=0
    )
    raw["collections"]["pair"] = {"members": ["alpha", "gamma"]}
    raw["collections"]["solo"] = {"members": ["alpha"], "reply": "route"}
    sim.set("sim-gamma", answer=ANSWER)
    gw = make_gateway(raw, store=store_of if store_of.startswith("postgresql") else None)
    gw.reader = request.param
    return gw


def _recorded(gw, path: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def ready() -> bool:
        response = gw.http.get(path)
        if response.status_code == 200:
            found.update(response.json())
        return bool(found.get("seats") or found.get("turns"))

    wait_until(ready)
    return found


def _sane_or_unknown(row: dict[str, Any], usage: Any, counted: bool = False) -> None:
    """The recorded counts: each the upstream's where it was a count, else 0; *counted*: a
    stream without a usage object is counted by its reader (litellm's counter), as always."""
    if counted and not isinstance(usage, dict):
        assert row["tokens_in"] > 0 and row["tokens_out"] > 0
        return
    for field, column in (("prompt_tokens", "tokens_in"), ("completion_tokens", "tokens_out")):
        stated = usage.get(field) if isinstance(usage, dict) else None
        sane = isinstance(stated, int) and 0 <= stated <= MOST_TOKENS
        assert row[column] == (stated if sane else 0), (column, row[column])


def _counts(usage: dict[str, Any]) -> list[Any]:
    return [usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")]


def _are_counts(values: list[Any]) -> bool:
    return all(isinstance(n, int) and 0 <= n <= 2 * MOST_TOKENS for n in values)


@pytest.mark.parametrize("case", list(USAGES))
def test_a_panel_seat_with_absurd_usage_is_answered_and_recorded(gateway_for, sim, case):
    gw = gateway_for
    refused = gw.reader == "litellm" and case in {*LITELLM_REFUSES, "not an object"}
    sim.set("sim-alpha", script=_plain(USAGES[case]))
    body = {"model": "bench/pair", "messages": QUESTION}
    response = gw.http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text  # before: 500 for the whole panel
    reply = response.json()
    seats = {s["alias"]: s for s in reply["bench"]["seats"]}
    alpha = "error" if refused else "ok"
    assert {a: s["status"] for a, s in seats.items()} == {"alpha": alpha, "gamma": "ok"}
    assert seats["gamma"]["answer"] == ANSWER
    assert _are_counts(_counts(reply["usage"]))
    panel = _recorded(gw, f"/bench/panels/{reply['bench']['panel']}")
    rows = {row["alias"]: row for row in panel["seats"]}
    assert set(rows) == {"alpha", "gamma"}  # before: alpha's row lost (the store refused it)
    assert rows["alpha"]["status"] == alpha
    if not refused:
        assert rows["alpha"]["answer"] == ANSWER
        _sane_or_unknown(rows["alpha"], USAGES[case])
    assert gw.http.get("/healthz").json()["status"] == "ok"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("case", list(USAGES))
def test_a_route_turn_with_absurd_usage_is_answered_and_recorded(gateway_for, sim, case, stream):
    gw = gateway_for
    refused = gw.reader == "litellm" and case in LITELLM_REFUSES
    sim.set("sim-alpha", script=_streamed(USAGES[case]))  # a member is always read streamed
    body: dict[str, Any] = {"model": "bench/solo:route", "messages": QUESTION, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    response = gw.http.post("/v1/chat/completions", json=body)
    conversation = response.headers["x-bench-conversation"]
    if refused:  # its only member failed inside litellm: said in the client's format
        if stream:
            events = [line for line in response.text.splitlines() if line.startswith("data: {")]
            assert response.status_code == 200 and '"error"' in events[-1]
        else:
            assert response.status_code == 502, response.text
            assert response.json()["error"]["code"] == "no_seat_answered"
        (turn,) = _recorded(gw, f"/bench/conversations/{conversation}")["turns"]
        assert turn["status"] == "error"
        assert gw.http.get("/healthz").json()["status"] == "ok"
        return
    assert response.status_code == 200, response.text  # before: 500 (plain)
    if stream:
        chunks = [
            json.loads(line[6:])
            for line in response.text.splitlines()
            if line.startswith("data: {")
        ]
        assert "error" not in chunks[-1], chunks[-1]
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        text = "".join(delta.get("content") or "" for delta in deltas)
        usages = [c["usage"] for c in chunks if c.get("usage")]
    else:
        reply = response.json()
        text = reply["choices"][0]["message"]["content"]
        usages = [reply["usage"]] if reply.get("usage") else []
    assert text == ANSWER and usages
    for usage in usages:  # relayed as counts, never the upstream's string or googol
        assert _are_counts(_counts(usage)), usage
    (turn,) = _recorded(gw, f"/bench/conversations/{conversation}")["turns"]
    assert turn["status"] == "ok" and turn["answer"] == ANSWER
    _sane_or_unknown(turn, USAGES[case], counted=True)
    assert gw.http.get("/healthz").json()["status"] == "ok"


def test_sane_usage_is_still_recorded_as_stated(gateway_for, sim):
    gw = gateway_for
    sim.set("sim-alpha", script=_plain(SANE))
    reply = gw.http.post("/v1/chat/completions", json={"model": "bench/pair", "messages": QUESTION})
    panel = _recorded(gw, f"/bench/panels/{reply.json()['bench']['panel']}")
    (alpha,) = [row for row in panel["seats"] if row["alias"] == "alpha"]
    assert (alpha["tokens_in"], alpha["tokens_out"]) == (11, 5)


def test_a_usage_field_that_is_not_a_count_is_said_in_the_log(caplog):
    from gateway.tokens import counts

    assert counts({"prompt_tokens": "lots", "completion_tokens": 7}, "openai/sim-alpha") == (0, 7)
    (said,) = [r.getMessage() for r in caplog.records if "not a token count" in r.getMessage()]
    assert "openai/sim-alpha" in said and "prompt_tokens = 'lots'" in said

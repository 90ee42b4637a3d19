"""What a hostile upstream's reply can cost the gateway, each attack made for real: the simulator
sends the reply (made as it is sent: a gigabyte, an endless line, a gzip bomb, a redirect) to a
gateway served as its own process (`serve --workers 1`), through litellm's reader and the
direct one, and the gateway's memory is read from /proc before and after. Each attack ends as a
classified seat failure (or a route turn handed on), never a crash; the bounds asserted are
generous, the point being that no reply's size reaches memory.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.serve.server import ServerThread
from simulator import create_sim_app
from tests.helpers.bench import Sim, bench_raw, served
from tests.helpers.served import served_gateway

GIB = 1 << 30
GROWTH_MB = 300  # the most a gateway may grow by for any one of these attacks
READERS = ["litellm", "direct"]
# a plain answer's JSON around its text, the text (the flood) left open
PLAIN_HEAD = (
    '{"id": "chatcmpl-flood", "object": "chat.completion", "created": 7, "model": "flood", '
    '"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
)
PLAIN_TAIL = '"}, "finish_reason": "stop"}]}'
STREAM_HEAD = (
    "data: "
    + json.dumps(
        {
            "id": "chatcmpl-flood",
            "object": "chat.completion.chunk",
            "created": 7,
            "model": "flood",
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}
            ],
        }  # fmt: skip
    )[:-4]
)  # the event's JSON cut inside its text: what follows never ends the line


def _raw(sim_url: str, reader: str, **gateway: Any) -> dict[str, Any]:
    raw = bench_raw(sim_url, upstream_reader=reader, max_explorers=0, reserves=0,
                    route_explore=0, **gateway)  # fmt: skip
    raw["collections"]["pair"] = {"members": ["alpha", "gamma"]}
    raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
    return raw


def _seats(reply) -> dict[str, dict[str, Any]]:
    assert reply.status_code == 200, reply.text
    return {s["alias"]: s for s in reply.json()["bench"]["seats"]}


def _record(gateway, call: str) -> dict[str, Any]:
    found = gateway.http.get(f"/bench/calls/{call}")
    assert found.status_code == 200, found.text
    record: dict[str, Any] = found.json()
    return record


def _ask(gateway, model: str = "bench/pair", **body: Any):
    question = [{"role": "user", "content": "Answer at length."}]
    return gateway.http.post("/v1/chat/completions", json={"model": model, "messages": question,
                                                           **body})  # fmt: skip


@pytest.mark.parametrize("reader", READERS)
def test_a_gigabyte_answer_without_content_length_is_cut_off_at_its_limit(sim, tmp_path, reader):
    """N8: headers without `Content-Length`, then 1 GiB of one JSON string, then the end. The
    answer is counted as it arrives and stops at `max_answer_bytes` (raw: 8 times it), not read
    whole first (before: 2.5 GB peak, 1.2 GB held after)."""
    flood = {"head": PLAIN_HEAD, "fill_bytes": GIB, "tail": PLAIN_TAIL}
    sim.set(served("alpha"), flood=flood)
    with served_gateway(_raw(sim.url, reader), tmp_path) as gateway:
        _ask(gateway)  # warm: every lazy import and first call paid before the measure
        before = gateway.rss_mb()
        seats = _seats(_ask(gateway))
        grown = gateway.peak_mb() - before
        assert seats["alpha"]["status"] == "error"
        assert seats["alpha"]["error"] == "the answer was over the limit of 4000000 bytes"
        assert _record(gateway, seats["alpha"]["call"])["error_class"] == "too_large"
        assert seats["gamma"]["status"] == "ok"  # the honest seat of the same panel
        assert grown < GROWTH_MB, f"the gateway grew by {grown:.0f} MB"
    outcomes = [r["outcome"] for r in sim.log(served("alpha"))]
    assert outcomes == ["client_disconnected"] * 2  # it hung up: the gigabyte was never sent


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_bomb_is_refused_before_a_byte_is_inflated(sim, tmp_path, reader, encoding):
    """N10: 2 GiB of `A` in a JSON string, sent compressed (some 2 MB on the wire). The gateway
    asks every provider for `identity` and never inflates: an encoded reply is refused at its
    headers (before: inflated to 2 GiB before a byte was counted, the loop held meanwhile)."""
    flood = {"head": PLAIN_HEAD, "fill_bytes": 2 * GIB, "tail": PLAIN_TAIL, "encoding": encoding}
    sim.set(served("alpha"), flood=flood)
    with served_gateway(_raw(sim.url, reader), tmp_path) as gateway:
        _ask(gateway)
        before = gateway.rss_mb()
        seats = _seats(_ask(gateway))
        grown = gateway.peak_mb() - before
        alpha = seats["alpha"]
        assert alpha["status"] == "error"
        assert f"Content-Encoding '{encoding}' though asked for identity" in alpha["error"]
        assert _record(gateway, alpha["call"])["error_class"] == "upstream"
        assert seats["gamma"]["status"] == "ok"  # the loop was never held from it
        assert grown < GROWTH_MB, f"the gateway grew by {grown:.0f} MB"


@pytest.mark.parametrize("reader", READERS)
def test_an_encoding_the_gateway_cannot_read_is_a_clean_failure(make_gateway, sim, reader):
    flood = {"head": PLAIN_HEAD + "Hello." + PLAIN_TAIL, "encoding": "br"}
    sim.set(served("alpha"), flood=flood)
    gateway = make_gateway(_raw(sim.url, reader))
    seats = _seats(_ask(gateway))
    assert seats["alpha"]["status"] == "error"
    assert "Content-Encoding 'br' though asked for identity; not read" in seats["alpha"]["error"]
    assert seats["gamma"]["status"] == "ok"


@pytest.fixture
def elsewhere():
    """Another server on loopback, where a hostile upstream would send the prompt."""
    server = ServerThread(create_sim_app({"models": {"*": {"answer": "INTERNAL-ANSWER"}}}))
    yield Sim(server.start())
    server.stop()


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("status", [307, 303, 301])
def test_an_upstreams_redirect_is_never_followed(make_gateway, sim, elsewhere, reader, status):
    """N18: the upstream answers a redirect to another host. The prompt goes nowhere else and
    no answer from elsewhere is recorded as the model's (before: followed, 307 re-sending the
    prompt, 303 fetching an answer recorded as the model's)."""
    port = elsewhere.url.rsplit(":", 1)[1]
    location = f"http://localhost:{port}/v1/chat/completions"
    sim.set(served("alpha"), script={"status": status, "headers": {"location": location},
                                     "content_type": "text/plain", "parts": []})  # fmt: skip
    gateway = make_gateway(_raw(sim.url, reader))
    seats = _seats(_ask(gateway))
    alpha = seats["alpha"]
    assert alpha["status"] == "error"
    assert (
        alpha["error"] == f"the provider answered {status}, a redirect to localhost; never followed"
    )
    assert _record(gateway, alpha["call"])["error_class"] == "upstream"
    assert "INTERNAL-ANSWER" not in json.dumps(seats)
    turn = _ask(gateway, "bench/crew:route")  # a route turn: handed to the next member
    assert turn.status_code == 200 and turn.json()["bench"]["alias"] == "gamma"
    assert "never followed" in turn.json()["bench"]["failed_over"][0]["error"]
    assert elsewhere.log() == []


@pytest.mark.parametrize("reader", READERS)
def test_an_endless_event_stream_line_is_cut_off_and_the_turn_handed_on(sim, tmp_path, reader):
    """N9: a route turn's member streams one line that never ends (1 GiB, no newline, then
    silence). Each line is held to `max_answer_bytes` plus 64 KiB; past it the stream is broken
    and the turn goes to the next member, turn after turn, memory given back (before, through
    litellm's reader: +250 MB kept per turn)."""
    sim.set(served("alpha"), flood={"head": STREAM_HEAD, "fill_bytes": GIB, "end": "stall",
                                    "content_type": "text/event-stream"})  # fmt: skip
    raw = _raw(sim.url, reader)
    # every turn meets the endless line: alpha is not benched after its third broken stream
    raw["lifecycle"] = {"failures_to_bench": 100}
    with served_gateway(raw, tmp_path) as gateway:
        _ask(gateway, "bench/crew:route")
        before = gateway.rss_mb()
        for _ in range(4):
            turn = _ask(gateway, "bench/crew:route")
            assert turn.status_code == 200, turn.text
            bench = turn.json()["bench"]
            assert bench["alias"] == "gamma"
            (broke,) = bench["failed_over"]
            assert broke["alias"] == "alpha"
            assert "an event stream line ran past 4065536 bytes without ending" in broke["error"]
        grown = gateway.rss_mb() - before
        assert grown < GROWTH_MB / 3, f"four turns kept {grown:.0f} MB"
        assert gateway.peak_mb() - before < GROWTH_MB
    assert {r["outcome"] for r in sim.log(served("alpha"))} == {"client_disconnected"}

"""Streamed panels through the OpenAI SDK's streaming API, and merged replies."""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from tests.helpers.bench import bench_raw, served

USER = [{"role": "user", "content": "Is the retry loop safe?"}]


def duo_raw(sim_url, **gateway):
    raw = bench_raw(sim_url, **{"max_explorers": 0, "reserves": 0, **gateway})
    raw["collections"]["trio"]["merger"] = None
    return raw


def stream(gw, model="bench/trio", **kw):
    """Consume a stream, noting when each chunk arrived."""
    arrivals = []
    with gw.client.chat.completions.create(model=model, messages=USER, stream=True, **kw) as s:
        for chunk in s:
            arrivals.append((time.time(), chunk))
    return arrivals


def text_of(arrivals) -> str:
    return "".join(c.choices[0].delta.content or "" for _, c in arrivals if c.choices)


def test_each_seat_arrives_the_moment_it_finishes(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), latency_s=2.0)
    sim.set(served("gamma"), latency_s=0.1, answer="gamma was quick")
    sim.set(served("delta"), latency_s=1.0)
    arrivals = stream(gw)

    first = arrivals[0][1]
    assert first.choices[0].delta.role == "assistant"
    gamma_at = next(
        t
        for t, c in arrivals
        if c.choices and "gamma was quick" in (c.choices[0].delta.content or "")
    )
    slow_ended = sim.log(served("alpha"))[0]["ended"]
    assert gamma_at < slow_ended, "the fast seat's section waited for the slow seat"

    sections = [
        c.choices[0].delta.content
        for _, c in arrivals
        if c.choices and (c.choices[0].delta.content or "").startswith("## ")
    ]
    assert [s.splitlines()[0] for s in sections] == [
        "## member2 — gamma",
        "## member3 — delta",
        "## member1 — alpha",
    ]  # finish order

    last = arrivals[-1][1]
    assert last.choices[0].finish_reason == "stop"
    bench = last.model_extra["bench"]
    assert [s["seat"] for s in bench["seats"]] == ["member1", "member2", "member3"]  # seat order
    assert last.usage.total_tokens > 0


def test_the_header_chunk_and_headers_name_the_panel(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    with gw.http.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": USER, "stream": True},
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        panel = response.headers["X-Bench-Panel"]
        body = response.read().decode()
    assert panel in body
    assert body.rstrip().endswith("data: [DONE]")


def test_keep_alives_are_sent_while_seats_think(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, keepalive_s=0.2))
    sim.set(served("alpha"), latency_s=1.2)
    with gw.http.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": USER, "stream": True},
    ) as response:
        body = response.read().decode()
    assert body.count(": keep-alive") >= 3


def test_a_client_that_hangs_up_loses_no_evidence(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), latency_s=1.0)
    with httpx.Client(base_url=gw.url, timeout=10) as client:
        with client.stream(
            "POST",
            "/v1/chat/completions",
            json={"model": "bench/trio", "messages": USER, "stream": True},
        ) as response:
            panel = response.headers["X-Bench-Panel"]
            next(response.iter_lines())  # the first chunk, then hang up
    deadline = time.monotonic() + 10
    seats = []
    while len(seats) < 3 and time.monotonic() < deadline:
        seats = gw.http.get(f"/bench/panels/{panel}").json()["seats"]
        time.sleep(0.1)
    assert sorted(s["status"] for s in seats) == ["ok", "ok", "ok"]
    assert not gw.runtime.panels  # the panel task is done, nothing leaked
    assert gw.http.get("/healthz").status_code == 200


def test_seats_stream_upstream_only_with_stream_seats_always(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    gw.ask("bench/trio")
    stream(gw)
    assert [r["stream"] for r in sim.log()] == [False] * 6  # a streamed panel too
    always = make_gateway(duo_raw(sim.url, stream_seats="always"))
    stream(always)
    assert [r["stream"] for r in sim.log()[6:]] == [True] * 3


def test_a_stream_cut_mid_way_is_an_error_seat_not_a_truncated_answer(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, stream_seats="always"))
    sim.set(served("alpha"), stream_cut_after=2, chunk_delay_s=0.01)
    completion, _ = gw.ask("bench/trio")
    alpha = completion.model_extra["bench"]["seats"][0]
    assert alpha["status"] == "error"
    assert "stream broke off" in alpha["error"]
    assert gw.http.get(f"/bench/calls/{alpha['call']}").json()["error_class"] == "broken_stream"


def test_first_token_time_is_recorded(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, stream_seats="always"))
    sim.set(served("alpha"), latency_s=0.3)
    completion, _ = gw.ask("bench/trio")
    call = completion.model_extra["bench"]["seats"][0]["call"]
    record = gw.http.get(f"/bench/calls/{call}").json()
    assert 0.3 <= record["first_token_s"] <= record["seconds"]


@pytest.mark.parametrize(
    "model, headers, status",
    [("bench/nope", {}, 404), ("bench/trio", {"X-Panel-Shape": "poetry"}, 400)],
)
def test_a_refused_stream_keeps_its_status(make_gateway, sim, model, headers, status):
    gw = make_gateway(duo_raw(sim.url))
    response = gw.http.post(
        "/v1/chat/completions",
        json={"model": model, "messages": USER, "stream": True},
        headers=headers,
    )
    assert response.status_code == status
    assert response.json()["error"]["message"]
    assert sim.log() == []


def test_no_seat_answering_mid_stream_is_an_in_stream_error_the_client_raises(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), status=500)
    with pytest.raises(openai.APIError) as caught:
        stream(gw)
    assert "No seat" in str(caught.value)


# Merged replies


def merged_raw(sim_url, merger="epsilon", **gateway):
    raw = duo_raw(sim_url, **gateway)
    raw["collections"]["trio"]["merger"] = merger
    return raw


def test_a_merged_reply_is_the_mergers_answer_with_every_seat_still_in_bench(make_gateway, sim):
    gw = make_gateway(merged_raw(sim.url))
    completion, _ = gw.ask("bench/trio:merged")
    content = completion.choices[0].message.content
    assert content.startswith("Simulated answer from sim-epsilon")
    assert "Conversation" in content  # the merger was asked with the conversation and answers
    bench = completion.model_extra["bench"]
    assert [s["status"] for s in bench["seats"]] == ["ok"] * 3
    merger = bench["merger"]
    assert merger["call"] == f"{bench['panel']}.merger" and merger["alias"] == "epsilon"
    record = gw.http.get(f"/bench/calls/{merger['call']}").json()
    assert record["seat"] == "merger" and record["status"] == "ok"
    verdict = gw.http.post("/bench/verdict", json={"call": merger["call"], "useful": True})
    assert verdict.json()["recorded"] is True
    merger_request = sim.log(served("epsilon"))[0]
    assert merger_request["started"] >= max(
        r["ended"] for r in sim.log() if r is not merger_request
    )


@pytest.mark.parametrize("how", ["suffix", "body", "collection"])
def test_a_merged_reply_can_be_asked_three_ways(make_gateway, sim, how):
    raw = merged_raw(sim.url)
    if how == "collection":
        raw["collections"]["trio"]["reply"] = "merged"
    gw = make_gateway(raw)
    model = "bench/trio:merged" if how == "suffix" else "bench/trio"
    extra = {"extra_body": {"bench": {"reply": "merged"}}} if how == "body" else {}
    completion, _ = gw.ask(model, **extra)
    assert completion.model_extra["bench"]["merger"]["alias"] == "epsilon"


def test_without_a_configured_merger_the_first_answering_member_merges(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=500)
    completion, _ = gw.ask("bench/trio:merged")
    assert completion.model_extra["bench"]["merger"]["alias"] == "gamma"


@pytest.mark.parametrize("failure", ["error", "too_small"])
def test_a_failed_merge_falls_back_to_every_answer_with_a_note(make_gateway, sim, failure):
    raw = merged_raw(sim.url)
    if failure == "too_small":
        raw["model_list"][4]["bench"]["context_window"] = 20  # epsilon
    else:
        sim.set(served("epsilon"), status=500)
    gw = make_gateway(raw)
    completion, _ = gw.ask("bench/trio:merged")
    bench = completion.model_extra["bench"]
    assert bench["note"] and "every answer is shown instead" in bench["note"]
    content = completion.choices[0].message.content
    assert "## member1 — alpha" in content and "## member3 — delta" in content


def test_a_streamed_merged_reply_sends_the_merged_answer_then_bench(make_gateway, sim):
    gw = make_gateway(merged_raw(sim.url))
    arrivals = stream(gw, model="bench/trio:merged")
    text = text_of(arrivals)
    assert text.startswith("Simulated answer from sim-epsilon")
    assert "## member1" not in text
    bench = arrivals[-1][1].model_extra["bench"]
    assert bench["merger"]["status"] == "ok" and len(bench["seats"]) == 3


def test_without_a_configured_merger_the_seat_with_most_useful_verdicts_merges(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    completion, _ = gw.ask("bench/trio")
    delta = completion.model_extra["bench"]["seats"][2]
    gw.http.post("/bench/verdict", json={"call": delta["call"], "useful": True})
    completion, _ = gw.ask("bench/trio:merged")
    assert completion.model_extra["bench"]["merger"]["alias"] == "delta"


def test_a_merged_reply_to_a_multi_part_request_merges_the_conversation(make_gateway, sim):
    gw = make_gateway(merged_raw(sim.url))
    parts = [
        {"type": "text", "text": "Is the retry loop safe?"},
        {"type": "text", "text": "Look at line 3."},
    ]
    completion = gw.client.chat.completions.create(
        model="bench/trio:merged", messages=[{"role": "user", "content": parts}]
    )
    content = completion.choices[0].message.content
    # the simulated merger echoes the start of what it was asked: the conversation, with text
    assert "[user] Is the retry loop safe?\nLook at line 3." in content
    bench = completion.model_extra["bench"]
    assert bench["merger"]["status"] == "ok"
    panel = gw.http.get(f"/bench/panels/{bench['panel']}").json()
    assert panel["prompt"] == "Is the retry loop safe?\nLook at line 3."

"""Upstream faults, one scenario each: the right seat status and error class in the reply and the
record, the panel still answering within its bounds, and the gateway serving afterwards.
The same table is in docs/reliability.md."""

from __future__ import annotations

import pytest

from gateway.serve.server import free_port
from tests.helpers.bench import bench_raw, served

TIMEOUT_S = 2


def duo_raw(sim_url):
    raw = bench_raw(
        sim_url, max_explorers=0, reserves=0, seat_timeout_s=TIMEOUT_S, stream_seats="always"
    )
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"]}
    return raw


# scenario: (alpha's behaviour, status, error class, words in the error)
SCENARIOS = {
    "429 with Retry-After": ({"status": 429, "retry_after": 5}, "rate_limited", "rate_limit", ""),
    "429 without Retry-After": ({"status": 429}, "rate_limited", "rate_limit", ""),
    "429 with retry-after-ms": (
        {"status": 429, "retry_after_ms": 1500},
        "rate_limited",
        "rate_limit",
        "",
    ),
    "503 every time": ({"status": 503}, "error", "upstream", "503"),
    "connection reset": ({"reset": True}, "error", "connection", ""),
    "no response at all": ({"hang": True}, "timeout", "timeout", f"{TIMEOUT_S} s"),
    "a stream cut before its finish": (
        {"stream_cut_after": 2, "chunk_delay_s": 0.01},
        "error",
        "broken_stream",
        "broke off",
    ),
    "a stream that stalls mid-way": ({"stream_stall_after": 1}, "timeout", "timeout", ""),
    "a malformed chunk": ({"malformed_chunk": True}, "error", "broken_stream", "broke off"),
    "401 unauthorized": ({"status": 401}, "error", "auth", ""),
    "a quota notice in a 200": (
        {"answer": "You exceeded your current quota, please check your plan and billing details."},
        "error",
        "notice",
        "notice",
    ),
    "maximum context length": (
        {"status": 400, "error_message": "This model's maximum context length is 4096 tokens."},
        "error",
        "context_window",
        "4096",
    ),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_fault_is_a_recorded_seat_status_and_the_panel_still_answers(
    make_gateway, sim, scenario
):
    behaviour, status, error_class, words = SCENARIOS[scenario]
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **behaviour)
    completion, raw = gw.ask("bench/duo")
    assert raw.status_code == 200
    alpha, gamma = completion.model_extra["bench"]["seats"]
    assert (alpha["status"], gamma["status"]) == (status, "ok")
    assert words in (alpha["error"] or "")
    assert alpha["seconds"] <= TIMEOUT_S + 1.5
    record = gw.http.get(f"/bench/calls/{alpha['call']}").json()
    assert (record["status"], record["error_class"]) == (status, error_class)
    if status != "ok":
        assert "## member1 — alpha" in completion.choices[0].message.content
        assert "> " in completion.choices[0].message.content  # the error, not an answer
    # still serving
    sim.set(served("alpha"), latency_s=0.01)
    assert gw.http.get("/healthz").json() == {"status": "ok"}
    assert gw.ask("bench/trio")[0].model_extra["bench"]["seats"][1]["status"] == "ok"


def test_a_500_once_then_fine_errors_one_panel_and_answers_the_next(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=500, fail_times=1)
    first, _ = gw.ask("bench/duo")
    assert first.model_extra["bench"]["seats"][0]["status"] == "error"
    second, _ = gw.ask("bench/duo")
    assert second.model_extra["bench"]["seats"][0]["status"] == "ok"
    assert len(sim.log(served("alpha"))) == 2  # no hidden retry in between


def test_a_refused_connection_is_a_connection_error_naming_the_host_and_port(make_gateway, sim):
    port = free_port()  # nothing listens on it
    raw = duo_raw(sim.url)
    params = raw["model_list"][0]["litellm_params"]
    params["api_base"] = f"http://127.0.0.1:{port}/v1"
    params["api_key"] = "sk-never-shown-1234"
    gw = make_gateway(raw)
    completion, _ = gw.ask("bench/duo")
    alpha = completion.model_extra["bench"]["seats"][0]
    assert alpha["status"] == "error"
    assert alpha["error"] == f"openai (127.0.0.1:{port}): connection refused"
    record = gw.http.get(f"/bench/calls/{alpha['call']}").json()
    assert record["error_class"] == "connection"
    assert f"127.0.0.1:{port}" in record["error"]
    assert "sk-never-shown" not in record["error"] + completion.choices[0].message.content


def test_a_slow_first_token_within_the_timeout_is_a_good_answer(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), latency_s=1.0)
    completion, _ = gw.ask("bench/duo")
    alpha = completion.model_extra["bench"]["seats"][0]
    assert alpha["status"] == "ok"
    assert gw.http.get(f"/bench/calls/{alpha['call']}").json()["first_token_s"] >= 1.0


def test_a_stream_without_done_but_with_its_finish_is_a_whole_answer(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), no_done=True, answer="complete answer here")
    completion, _ = gw.ask("bench/duo")
    alpha = completion.model_extra["bench"]["seats"][0]
    assert (alpha["status"], alpha["answer"]) == ("ok", "complete answer here")


def test_a_learned_context_window_skips_the_model_for_the_next_oversized_prompt(
    make_gateway, sim, tmp_path
):
    raw = duo_raw(sim.url)
    raw["collections"]["duo"]["members"] = ["gamma", "alpha"]
    gw = make_gateway(raw)
    sim.set(
        served("alpha"),
        status=400,
        error_message="This model's maximum context length is 200 tokens.",
    )
    big = "word " * 400  # ~550 estimated tokens
    gw.ask("bench/duo", content=big)
    assert len(sim.log(served("alpha"))) == 1
    completion, _ = gw.ask("bench/duo", content=big)
    skipped = completion.model_extra["bench"]["skipped"]
    assert skipped and skipped[0]["alias"] == "alpha" and "200 tokens" in skipped[0]["why"]
    assert len(sim.log(served("alpha"))) == 1  # not called again
    small, _ = gw.ask("bench/duo", content="short")
    assert len(sim.log(served("alpha"))) == 2  # a prompt that fits still goes to it

    gw.close()  # the learned window survives a restart
    again = make_gateway(raw)
    completion, _ = again.ask("bench/duo", content=big)
    assert completion.model_extra["bench"]["skipped"][0]["alias"] == "alpha"

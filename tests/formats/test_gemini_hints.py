"""Gemini on a panel as the Gemini CLI's side calls and langchain-google-genai ask it: hint
fields translated or named (never refused), `safetySettings: []` a no-op, Gemini's v1 paths
served like v1beta, a thought signature on an earlier part left out."""

from __future__ import annotations

from google import genai
from google.genai import types

from tests.helpers.agents import captured, sse_events
from tests.helpers.hints import dropped


def test_the_clis_router_call_to_a_panel_is_answered_with_its_hints_named(gw, sim):
    """The auto-router's side call: upper-case JSON schema types, topK, thinkingLevel HIGH."""
    request = captured("gemini", "auto_router_classifier")
    response = gw.http.post("/v1beta/models/bench/trio:generateContent", json=request["body"])
    assert response.status_code == 200, response.text
    assert sorted(dropped(response)) == ["thinkingConfig.includeThoughts", "topK"]
    assert {r["body"]["reasoning_effort"] for r in sim.log()} == {"high"}
    assert all(r["body"]["response_format"]["type"] != "text" for r in sim.log())


def test_gemini_v1_paths_are_served_like_v1beta_with_empty_safety_settings(gw, sim):
    options = types.HttpOptions(base_url=gw.url, api_version="v1", timeout=30_000)
    client = genai.Client(api_key="local", http_options=options)
    config = types.GenerateContentConfig(safety_settings=[], top_k=20)
    reply = client.models.generate_content(model="bench/trio", contents="hello", config=config)
    assert "## member1 — alpha" in reply.text
    assert reply.sdk_http_response.headers["x-bench-dropped"] == "topK"
    assert len(sim.log()) == 3  # every seat was asked
    streamed = list(
        client.models.generate_content_stream(model="bench/trio", contents="hello", config=config)
    )
    assert streamed[-1].candidates[0].finish_reason == types.FinishReason.STOP
    counted = client.models.count_tokens(model="bench/trio", contents="hello")
    assert counted.total_tokens > 0
    client.close()


def test_an_error_on_a_v1_path_is_googles_shape(gw, sim):
    response = gw.http.post("/v1/models/bench/trio:generateContent", json={"contents": []})
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
    unknown = gw.http.post(
        "/v1/models/bench/nope:generateContent", json={"contents": [{"parts": [{"text": "hi"}]}]}
    )
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == "NOT_FOUND"


def test_a_thought_signature_on_an_earlier_part_is_left_out(gw, sim):
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"text": "hello", "thoughtSignature": "abc"}]},
            {"role": "model", "parts": [{"text": "musing", "thought": True}]},
            {"role": "user", "parts": [{"text": "again"}]},
        ],
    }
    response = gw.http.post("/v1beta/models/bench/trio:generateContent", json=body)
    assert response.status_code == 200, response.text
    sent = sim.log()[0]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "abc" not in str(sent) and "musing" not in str(sent)


def test_a_streamed_panel_no_seat_answers_is_a_real_status_not_an_in_stream_error(gw, sim):
    """The Gemini CLI takes an in-stream error for an empty answer and retries it (four
    times, then exits 0): the 200 waits for the first answer, so a failed panel is a 502."""
    sim.set("*", status=500)
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    path = "/v1beta/models/bench/trio:streamGenerateContent?alt=sse"
    response = gw.http.post(path, json=body)
    assert response.status_code == 502
    assert response.json()["error"]["status"] == "UNAVAILABLE"
    sim.set("*", status=200)
    # every model of the connection failed at once, so it is down and they are benched:
    # restored by hand, they are seated again
    for model in gw.http.get("/bench/health").json()["models"]:
        if model["health"] != "ok":
            assert gw.http.post(f"/bench/models/{model['alias']}/restore").status_code == 200
    sim.set("sim-alpha", status=500)  # one seat fails, the others answer: a stream
    streamed = gw.http.post(path, json=body)
    assert streamed.status_code == 200
    chunks = sse_events(streamed.text)
    text = "".join(p["text"] for c in chunks for p in c["candidates"][0]["content"]["parts"])
    assert "## member1 — alpha" in text and "## member2 — gamma" in text

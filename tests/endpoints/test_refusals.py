"""Refused requests: an OpenAI-shaped error, nobody seated, no upstream called, nothing written."""

from __future__ import annotations

import re

import openai
import pytest

from tests.helpers.bench import assert_openai_error, bench_raw, nothing_happened

USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    "body, param",
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (b'{"model": "bench/trio"}', "messages"),
        (b'{"model": "bench/trio", "messages": []}', "messages"),
        (b'{"model": "bench/trio", "messages": ["hi"]}', "messages[0]"),
        (
            b'{"model": "bench/trio", "messages": [{"role": "robot", "content": "x"}]}',
            "messages[0]",
        ),
        (b'{"model": "bench/trio", "messages": [{"role": "user", "content": 5}]}', "messages[0]"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "model"),
        (b'{"model": 7, "messages": [{"role": "user", "content": "x"}]}', "model"),
        (
            b'{"model": "bench/trio", "messages": [{"role": "user", "content": "x"}], '
            b'"temperature": "hot"}',
            "temperature",
        ),
        (
            b'{"model": "bench/trio", "messages": [{"role": "user", "content": "x"}], '
            b'"stream": "yes"}',
            "stream",
        ),
        (
            b'{"model": "bench/trio", "messages": [{"role": "user", "content": "x"}], '
            b'"with": "alpha"}',
            "with",
        ),
    ],
)
def test_malformed_requests_are_400(gateway, sim, tmp_path, body, param):
    error = assert_openai_error(gateway.http.post("/v1/chat/completions", content=body), 400)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    nothing_happened(sim, tmp_path / "records.db")


def test_an_unknown_shape_is_400_listing_the_known_shapes(gateway, sim, tmp_path):
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.ask("bench/trio", extra_headers={"X-Panel-Shape": "poetry"})
    message = caught.value.body["message"]
    assert "poetry" in message and "review" in message and "design" in message
    nothing_happened(sim, tmp_path / "records.db")


def test_an_unknown_nominee_is_400(gateway, sim, tmp_path):
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.ask("bench/trio", extra_body={"with": ["ghost"]})
    assert "ghost" in caught.value.body["message"]
    response = gateway.http.post(
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": USER},
        headers={"X-Panel-With": "alpha,ghost"},
    )
    assert assert_openai_error(response, 400)["param"] == "with"
    nothing_happened(sim, tmp_path / "records.db")


@pytest.mark.parametrize(
    "extra",
    [
        {"tool_choice": "required"},
        {"tool_choice": {"type": "function", "function": {"name": "f"}}},
        {"function_call": {"name": "f"}},
    ],
)
def test_a_tool_choice_demanding_a_call_is_refused_on_a_panel_naming_route(
    gateway, sim, tmp_path, extra
):
    """A panel answers in prose (contract §11, "Tools on a panel"): tools are not offered to
    its seats, and only a choice that demands a call is refused."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    body = {"model": "bench/trio", "messages": USER, "tools": tools, **extra}
    error = assert_openai_error(gateway.http.post("/v1/chat/completions", json=body), 400)
    assert ":route" in error["message"]
    nothing_happened(sim, tmp_path / "records.db")


def test_an_unknown_collection_is_404_listing_collections_with_descriptions(gateway, sim, tmp_path):
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.ask("bench/nope")
    message = caught.value.body["message"]
    assert "nope" in message
    assert "bench/trio: three members" in message and "bench/solo: one member" in message
    nothing_happened(sim, tmp_path / "records.db")


def test_a_mistyped_name_gets_a_did_you_mean_wherever_it_is_named(gateway, sim, tmp_path):
    """The config checker's did-you-mean, in every refusal that names an unknown name."""
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.ask("bench/reviewrs")
    assert (
        "Unknown collection 'reviewrs'; did you mean bench/reviewers?"
        in (caught.value.body["message"])
    )
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.ask("bench/tiro:route")
    assert "did you mean bench/trio:route?" in caught.value.body["message"]
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.ask("bench/trio", extra_headers={"X-Panel-Shape": "reveiw"})
    assert "Unknown panel shape 'reveiw'; did you mean 'review'?" in caught.value.body["message"]
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.ask("bench/trio", extra_body={"with": ["gama"]})
    assert "gama (did you mean gamma?)" in caught.value.body["message"]
    listed = gateway.http.get("/v1/models/bench/reviewrs")
    assert "did you mean bench/reviewers?" in assert_openai_error(listed, 404)["message"]
    shown = gateway.http.post("/api/show", json={"model": "bench/reviewrs"})
    assert shown.status_code == 404 and "did you mean bench/reviewers?" in shown.text
    nothing_happened(sim, tmp_path / "records.db")


def test_a_did_you_mean_ends_its_sentence(gateway, sim):
    """The guess is a question: the sentence after it starts afresh ("?." and "?;" read oddly)."""
    messages = []
    for model, shape in (
        ("bench/reviewrs", None),
        ("bench/tiro:route", None),
        ("bench/trio", "reveiw"),
    ):
        headers = {"X-Panel-Shape": shape} if shape else {}
        with pytest.raises(openai.APIStatusError) as caught:
            gateway.ask(model, extra_headers=headers)
        messages.append(caught.value.body["message"])
    messages.append(gateway.http.get("/v1/models/bench/reviewrs").json()["error"]["message"])
    for message in messages:
        assert "did you mean" in message and not re.search(r"\?[.;]", message), message
    assert "did you mean bench/reviewers? Collections: bench/" in messages[0]


def test_nothing_close_gets_no_guess(gateway, sim):
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.ask("bench/xyzzy")
    assert "did you mean" not in caught.value.body["message"]


def test_a_body_over_the_limit_is_413(make_gateway, sim, tmp_path):
    gw = make_gateway(max_body_bytes=2000)
    body = {"model": "bench/trio", "messages": [{"role": "user", "content": "x" * 5000}]}
    assert_openai_error(gw.http.post("/v1/chat/completions", json=body), 413)
    nothing_happened(sim, tmp_path / "records.db")


def test_a_prompt_no_member_can_hold_is_413(make_gateway, sim, tmp_path):
    raw = bench_raw(sim.url)
    for entry in raw["model_list"]:
        entry["bench"]["context_window"] = 100
    gw = make_gateway(raw)
    with pytest.raises(openai.APIStatusError) as caught:
        gw.ask("bench/trio", content="word " * 400)
    assert caught.value.status_code == 413
    assert "alpha" in caught.value.body["message"]
    nothing_happened(sim, tmp_path / "records.db")


def test_a_member_too_small_is_skipped_and_a_reserve_takes_its_seat(make_gateway, sim):
    raw = bench_raw(sim.url)
    raw["model_list"][0]["bench"]["context_window"] = 100  # alpha
    gw = make_gateway(raw)
    completion, _ = gw.ask("bench/trio", content="word " * 400)
    bench = completion.model_extra["bench"]
    assert bench["skipped"][0]["alias"] == "alpha" and bench["skipped"][0]["seat"] == "member1"
    assert "context window" in bench["skipped"][0]["why"]
    reserve = [s for s in bench["seats"] if s["replaces"] == "member1"]
    assert reserve and reserve[0]["seat"] == "reserve1" and reserve[0]["status"] == "ok"
    assert "sim-alpha" not in {r["model"] for r in sim.log()}


def test_nothing_to_seat_is_503(make_gateway, sim, tmp_path):
    raw = bench_raw(sim.url)
    for entry in raw["model_list"]:
        entry["bench"]["ad_hoc"] = True
    gw = make_gateway(raw)
    error = assert_openai_error(
        gw.http.post("/v1/chat/completions", json={"model": "bench/panel", "messages": USER}), 503
    )
    assert "seated" in error["message"]
    nothing_happened(sim, tmp_path / "records.db")


def test_unknown_routes_and_methods_are_openai_shaped(gateway):
    assert_openai_error(gateway.http.get("/v1/nothing"), 404)
    assert_openai_error(gateway.http.get("/v1/chat/completions"), 405)


def test_every_json_reply_ends_with_a_newline_as_curl_shows_it(gateway, sim):
    """Answers, listings, records and refusals alike, so a shell prompt starts on its own line."""
    body = {"model": "bench/solo", "messages": USER}
    asked = gateway.http.post("/v1/chat/completions", json=body)
    call = asked.json()["bench"]["seats"][0]["call"]
    replies = [
        asked,
        gateway.http.get("/v1/models"),
        gateway.http.get("/healthz"),
        gateway.http.get("/openapi.json"),
        gateway.http.get("/bench/models"),
        gateway.http.get(f"/bench/calls/{call}"),
        gateway.http.post("/bench/verdict", json={"call": call, "useful": True}),
        gateway.http.get("/v1/nothing"),  # 404
        gateway.http.post("/v1/chat/completions", content=b"{not json"),  # 400
        gateway.http.post(  # 415: what `curl -d` sends without -H 'Content-Type: ...'
            "/bench/verdict",
            content=b"{}",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        ),
        gateway.http.post("/v1/messages", json={"model": "bench/nope", "max_tokens": 5,
                                                "messages": USER}),  # 404, Anthropic's shape
    ]  # fmt: skip
    for reply in replies:
        assert reply.headers["content-type"].startswith("application/json"), reply.request.url
        assert reply.content.endswith(b"\n") and not reply.content.endswith(b"\n\n"), reply.text
    assert [r.status_code for r in replies[-4:]] == [404, 400, 415, 404]


def test_a_collection_asked_in_another_case_is_named_as_written(gateway, sim, tmp_path):
    """Names are case-sensitive; a request that differs only in case is told so."""
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.ask("bench/Trio")
    message = caught.value.body["message"]
    assert "Unknown collection 'Trio'; did you mean bench/trio (names are case-sensitive)?" in (
        message
    )
    nothing_happened(sim, tmp_path / "records.db")

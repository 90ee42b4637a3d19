"""Fields every OpenAI format honours or refuses, never drops: `n`, `response_format`, one model
by name (`GET /v1/models/{id}`), and the X-Bench-Seats header."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openai
import pytest
import yaml

from tests.helpers.bench import bench_raw, served

ROOT = Path(__file__).parents[2]
USER = [{"role": "user", "content": "List three risks as JSON."}]
JSON_OBJECT = {"type": "json_object"}


@pytest.mark.parametrize("n", [2, 0, "1", True])
def test_n_other_than_1_is_refused_in_chat_and_calls_nothing(gateway, sim, n):
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.client.chat.completions.create(
            model="bench/trio", messages=USER, extra_body={"n": n}
        )
    assert caught.value.body["param"] == "n" and "one reply" in caught.value.body["message"]
    assert sim.log() == []


def test_n_of_1_is_answered(gateway, sim):
    completion, _ = gateway.ask("bench/solo", n=1)
    assert len(completion.choices) == 1


def test_response_format_goes_to_every_seat_and_a_plain_panel_says_its_content_is_markdown(
    gateway, sim
):
    completion, _ = gateway.ask(
        "bench/trio", content=USER[0]["content"], response_format=JSON_OBJECT
    )
    assert [c["response_format"] for c in sim.log()] == [JSON_OBJECT] * len(sim.log())
    notes = completion.model_extra["bench"]["notes"]
    assert any("json_object" in n and "side by side" in n and "trio:merged" in n for n in notes)


def test_a_merged_reply_asks_the_merger_for_the_format_and_needs_no_note(gateway, sim):
    sim.set(served("alpha"), answer='{"risks": ["a", "b", "c"]}')
    completion, _ = gateway.ask(
        "bench/solo:merged", content=USER[0]["content"], response_format=JSON_OBJECT
    )
    bench = completion.model_extra["bench"]
    assert bench["merger"]["status"] == "ok"
    assert [c["response_format"] for c in sim.log()] == [JSON_OBJECT] * len(sim.log())
    assert len(sim.log()) == len(bench["seats"]) + 1  # the merger was asked for it too
    assert not any("side by side" in n for n in bench["notes"])


def test_a_plain_panel_without_a_response_format_has_no_such_note(gateway, sim):
    completion, _ = gateway.ask("bench/trio", response_format={"type": "text"})
    assert not any("side by side" in n for n in completion.model_extra["bench"]["notes"])


def test_every_listed_model_answers_by_name_and_others_are_a_404(gateway, sim):
    listed = gateway.client.models.list().data
    assert {m.id for m in listed} >= {"bench/trio", "bench/trio:merged", "bench/panel"}
    for model in listed:
        found = gateway.client.models.retrieve(model.id)
        assert found.id == model.id and found.model_extra["members"] == model.model_extra["members"]
    assert gateway.http.get("/v1/models/trio").json()["id"] == "bench/trio"
    assert (
        gateway.http.get("/models").json()["data"] == gateway.http.get("/v1/models").json()["data"]
    )
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.client.models.retrieve("bench/nope")
    assert set(caught.value.body) == {"message", "type", "param", "code"}
    assert gateway.http.get("/models/gpt-4o").status_code == 404


def test_a_model_outside_the_keys_collections_is_a_404(make_gateway, sim, tmp_path):
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway.cli",
            "keys",
            "create",
            "solo-only",
            "--collections",
            "solo",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    gw = make_gateway(raw)
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=made.stdout.strip(), max_retries=0)
    assert client.models.retrieve("bench/solo").id == "bench/solo"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("bench/trio")
    with pytest.raises(openai.AuthenticationError):
        gw.client.models.retrieve("bench/solo")  # no key


def test_x_bench_seats_carries_each_seats_final_status_on_a_plain_reply(gateway, sim):
    sim.set(served("gamma"), status=500)
    completion, raw = gateway.ask("bench/trio")
    seats = json.loads(raw.headers["X-Bench-Seats"])
    assert seats == [
        {"call": s["call"], "seat": s["seat"], "alias": s["alias"], "status": s["status"]}
        for s in completion.model_extra["bench"]["seats"]
    ]
    assert {"gamma": "error"}.items() <= {s["alias"]: s["status"] for s in seats}.items()


def test_x_bench_seats_on_a_stream_is_the_seated_plan_and_on_an_error_the_final_statuses(
    gateway, sim
):
    with gateway.client.chat.completions.with_streaming_response.create(
        model="bench/trio", messages=USER, stream=True
    ) as raw:
        seated = json.loads(raw.headers["X-Bench-Seats"])
        chunks = list(raw.parse())
    bench = chunks[-1].model_extra["bench"]
    assert [s["call"] for s in seated] == [s["call"] for s in bench["seats"]]
    assert {s["status"] for s in seated} == {"seated"}

    for alias in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta"):
        sim.set(served(alias), status=500)
    with pytest.raises(openai.InternalServerError) as caught:
        gateway.ask("bench/trio")
    seats = json.loads(caught.value.response.headers["X-Bench-Seats"])
    assert seats and {s["status"] for s in seats} == {"error"}

"""Asking a panel end to end: the OpenAI SDK -> the gateway -> litellm -> the simulated upstream."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from gateway.panel.seating import new_panel_id
from tests.helpers.bench import MODELS, served


def test_a_three_member_collection_seats_five_labelled_seats_called_together(gateway, sim):
    for alias in MODELS:
        sim.set(served(alias), latency_s=0.5)
    completion, raw = gateway.ask("bench/trio")

    bench = completion.model_extra["bench"]
    seats = bench["seats"]
    assert [s["seat"] for s in seats] == ["member1", "member2", "member3", "explorer1", "explorer2"]
    assert [s["alias"] for s in seats[:3]] == ["alpha", "gamma", "delta"]
    assert all(s["status"] == "ok" for s in seats)
    assert all(s["call"] == f"{bench['panel']}.{s['seat']}" for s in seats)
    assert raw.headers["X-Bench-Panel"] == bench["panel"]
    assert completion.model == "bench/trio"

    # every upstream call started before any of them could have finished: they ran in parallel
    calls = sim.log()
    assert len(calls) == 5
    starts = [c["started"] for c in calls]
    ends = [c["ended"] for c in calls]
    assert max(starts) < min(ends)
    assert max(starts) - min(starts) < 0.4


def test_the_reply_is_every_answer_side_by_side_in_markdown(gateway, sim):
    sim.set(served("alpha"), answer="Alpha says the loop never ends.")
    sim.set(served("gamma"), answer="Gamma says line 3 is fine.")
    completion, _ = gateway.ask("bench/trio")
    content = completion.choices[0].message.content
    bench = completion.model_extra["bench"]
    assert bench["panel"] in content.splitlines()[0]
    assert "## member1 — alpha" in content and "Alpha says the loop never ends." in content
    assert "## member2 — gamma" in content and "Gamma says line 3 is fine." in content
    for seat in bench["seats"]:
        assert seat["call"] in content
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert completion.usage.completion_tokens > 0


def test_review_shape_admits_code_models_and_design_never_does(gateway, sim):
    # solo's only member is alpha; explorers come from the rest of the bench
    seen_review, seen_design = set(), set()
    for _ in range(4):
        completion, raw = gateway.ask("bench/solo", extra_headers={"X-Panel-Shape": "review"})
        assert raw.headers["X-Panel-Shape"] == "review"
        seen_review |= {s["alias"] for s in completion.model_extra["bench"]["seats"]}
        completion, raw = gateway.ask("bench/solo", extra_headers={"X-Panel-Shape": "design"})
        assert completion.model_extra["bench"]["shape"] == "design"
        assert completion.model_extra["bench"]["shape_by"] == "header"
        seen_design |= {s["alias"] for s in completion.model_extra["bench"]["seats"]}
    assert "gamma" in seen_review
    assert "gamma" not in seen_design and "zeta" not in seen_design


def test_the_collection_shape_applies_when_no_header_names_one(gateway):
    completion, raw = gateway.ask("bench/solo")
    bench = completion.model_extra["bench"]
    assert (bench["shape"], bench["shape_by"]) == ("design", "collection")
    completion, _ = gateway.ask("bench/trio")
    bench = completion.model_extra["bench"]
    assert (bench["shape"], bench["shape_by"]) == ("general", "default")


def test_a_bare_collection_name_works_as_the_model(gateway):
    completion, _ = gateway.ask("trio")
    assert completion.model_extra["bench"]["collection"] == "trio"


def test_a_seat_that_times_out_errors_or_comes_back_empty_leaves_the_others_answering(
    make_gateway, sim
):
    sim.set(served("alpha"), hang=True)
    sim.set(served("gamma"), status=500, error_message="upstream exploded")
    sim.set(served("delta"), empty=True)
    raw = bench_with_extra_member(sim.url)
    gw = make_gateway(raw, seat_timeout_s=1)
    completion, _ = gw.ask("bench/quad")
    by_alias = {s["alias"]: s for s in completion.model_extra["bench"]["seats"]}
    assert by_alias["alpha"]["status"] == "timeout"
    assert by_alias["gamma"]["status"] == "error"
    assert "exploded" in by_alias["gamma"]["error"]
    assert by_alias["delta"]["status"] == "empty"
    assert by_alias["epsilon"]["status"] == "ok"
    assert by_alias["alpha"]["seconds"] < 3


def bench_with_extra_member(sim_url):
    from tests.conftest import bench_raw

    raw = bench_raw(sim_url, seat_timeout_s=1, max_explorers=0)
    raw["collections"]["quad"] = {"members": ["alpha", "gamma", "delta", "epsilon"]}
    return raw


def test_no_seat_answering_is_a_502_that_still_carries_every_seat(make_gateway, sim):
    gw = make_gateway(max_explorers=0, reserves=0)  # a failing member's reserve would answer
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), status=503)
    response = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 502
    body = response.json()
    assert body["error"]["type"] == "upstream_error"
    assert [s["status"] for s in body["bench"]["seats"]] == ["error"] * 3
    with pytest.raises(openai.APIStatusError) as caught:
        gw.ask("bench/trio")
    assert caught.value.status_code == 502


def test_sampling_fields_reach_every_seat(gateway, sim):
    gateway.ask("bench/trio", temperature=0.3, max_tokens=77)
    calls = sim.log()
    assert len(calls) == 5
    assert all(c["max_tokens"] == 77 and c["temperature"] == 0.3 for c in calls)


def test_nominees_sit_in_explorer_chairs_by_body_or_header(gateway, sim):
    completion, _ = gateway.ask("bench/solo", extra_body={"with": ["gamma"]})
    bench = completion.model_extra["bench"]
    assert ("explorer1", "gamma") == (bench["seats"][1]["seat"], bench["seats"][1]["alias"])
    assert any("gamma" in note for note in bench["notes"])  # a code model on a design panel
    completion, _ = gateway.ask("bench/solo", extra_headers={"X-Panel-With": "zeta, epsilon"})
    aliases = [s["alias"] for s in completion.model_extra["bench"]["seats"]]
    assert aliases[1:3] == ["zeta", "epsilon"]


def test_a_nominee_that_cannot_sit_is_listed_in_skipped(gateway):
    completion, _ = gateway.ask("bench/solo", extra_body={"with": ["alpha"]})
    skipped = completion.model_extra["bench"]["skipped"]
    assert skipped == [{"alias": "alpha", "seat": None, "why": "already seated on this panel"}]


def test_the_router_panel_seats_primary_second_and_explorers(gateway):
    completion, _ = gateway.ask("bench/panel")
    seats = completion.model_extra["bench"]["seats"]
    assert [s["seat"] for s in seats] == ["primary", "second", "explorer1", "explorer2"]
    assert len({s["alias"] for s in seats}) == 4


def test_models_lists_every_collection_and_the_router_panel(gateway):
    listed = {m.id: m for m in gateway.client.models.list().data}
    names = {"bench/trio", "bench/solo", "bench/reviewers", "bench/panel"}
    assert set(listed) == names | {f"{name}:merged" for name in names}
    assert listed["bench/trio:merged"].model_extra["reply"] == "merged"
    trio = listed["bench/trio"].model_extra
    assert trio["members"] == ["alpha", "gamma", "delta"]
    assert trio["explorers"] == 2 and trio["description"] == "three members"
    assert listed["bench/reviewers"].model_extra["tags"] == ["review"]
    assert listed["bench/solo"].model_extra["shape"] == "design"


def test_healthz_is_ok_once_ready(gateway):
    assert gateway.http.get("/healthz").json() == {"status": "ok"}


def test_concurrent_panels_all_answer(gateway):
    with ThreadPoolExecutor(8) as pool:
        completions = list(pool.map(lambda _: gateway.ask("bench/trio")[0], range(8)))
    panels = {c.model_extra["bench"]["panel"] for c in completions}
    assert len(panels) == 8
    assert all(s["status"] == "ok" for c in completions for s in c.model_extra["bench"]["seats"])


def test_panel_ids_start_with_the_second_they_were_seated_so_later_ones_sort_after():
    earlier = [new_panel_id(1_764_558_000.9) for _ in range(50)]
    later = new_panel_id(1_764_558_001.0)
    assert len(set(earlier)) == 50  # the same second, still apart
    assert all(re.fullmatch(r"p[0-9a-f]{20}", i) for i in [*earlier, later])
    assert all(i[:9] == "p692d04b0" for i in earlier)
    assert max(earlier) < later

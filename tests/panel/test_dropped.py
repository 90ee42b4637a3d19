"""A panel's hint fields: each seat is given the hints its provider takes; what a seat is not
given is on its record, and `X-Bench-Dropped` names what some seat was not given."""

from __future__ import annotations

import pytest

from tests.helpers.hints import OLD, dropped, mixed_raw


@pytest.fixture
def mixed(make_gateway, sim):
    return make_gateway(mixed_raw(sim.url))


def test_each_seat_gets_the_hints_its_provider_takes_and_its_record_says_what_it_did_not(
    mixed, sim
):
    completion, raw = mixed.ask("bench/pair", "think", reasoning_effort="low")
    assert dropped(raw) == ["reasoning_effort"]
    assert "reasoning_effort" not in sim.log(OLD)[0]["body"]
    assert sim.log("sim-alpha")[0]["body"]["reasoning_effort"] == "low"
    seats = {s["alias"]: s["call"] for s in completion.model_extra["bench"]["seats"]}
    records = {a: mixed.http.get(f"/bench/calls/{call}").json() for a, call in seats.items()}
    assert records["old"]["dropped"] == ["reasoning_effort"]
    assert records["alpha"]["dropped"] == []


def test_a_panel_names_what_no_seat_is_given(mixed, sim):
    completion, raw = mixed.ask("bench/pair", "hi", extra_body={"top_k": 3, "frobnicate": 1})
    assert sorted(dropped(raw)) == ["frobnicate", "top_k"]
    assert all("top_k" not in r["body"] and "frobnicate" not in r["body"] for r in sim.log())
    assert all(s["status"] == "ok" for s in completion.model_extra["bench"]["seats"])

"""A panel's markdown reply puts the answers before the failures: a reader meets what the
seats said first, then which seats failed and why."""

from __future__ import annotations

import pytest

from tests.helpers.bench import quiet_raw


@pytest.fixture
def gw(make_gateway, sim):
    return make_gateway(quiet_raw(sim.url))


def test_the_answers_come_before_a_failed_first_seat(gw, sim):
    sim.set("sim-alpha", status=401, error_message="Invalid API Key")
    completion, _ = gw.ask("bench/trio", "Is this code right?")
    seats = completion.model_extra["bench"]["seats"]
    assert seats[0]["alias"] == "alpha" and seats[0]["status"] != "ok"  # bench keeps seat order
    text = completion.choices[0].message.content
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[-1] == "## member1 — alpha", sections
    failed_at = text.index("## member1 — alpha")
    assert all(text.index(f"## {s['seat']} — {s['alias']}") < failed_at
               for s in seats if s["status"] == "ok")  # fmt: skip
    assert "Invalid API Key" in text[failed_at:]

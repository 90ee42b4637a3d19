"""Probes (contract §18): the gateway asks a model itself, one small call through the same
upstream path, to confirm a withdrawal and to ask a retired model again."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from tests.health.test_bench_keeps_itself import answers, duo_raw, health_of, skipped_alpha
from tests.helpers.bench import served
from tests.helpers.clocks import ManualClock, wait_until


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def events(gw) -> list[tuple[str, str]]:
    """The health events kept in the gateway's SQLite store, oldest first."""
    path = gw.config.store.removeprefix("sqlite:///")
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute("SELECT alias, health FROM health_events ORDER BY at").fetchall()


def test_a_withdrawn_model_is_retired_by_the_confirming_probe(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(404, "The model `gone` does not exist"))
    gw.ask("bench/duo")
    assert health_of(gw, "alpha") == "benched"
    clock.advance(600)
    wait_until(lambda: health_of(gw, "alpha") == "retired")
    assert len(sim.log(served("alpha"))) == 2  # the panel's call, then the probe
    assert skipped_alpha(gw.ask("bench/duo")[0])["why"].startswith("retired: gone: ")
    assert events(gw) == [("alpha", "benched"), ("alpha", "retired")]


def test_a_retired_model_that_answers_the_re_probe_is_restored(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(410, "Gone."))
    gw.ask("bench/duo")
    assert health_of(gw, "alpha") == "retired"
    sim.set(served("alpha"))  # it is back
    clock.advance(86400)
    wait_until(lambda: health_of(gw, "alpha") == "ok")
    # the board has it first; the store's event follows as the probe ends
    wait_until(lambda: events(gw) == [("alpha", "retired"), ("alpha", "ok")])
    completion, _ = gw.ask("bench/duo")
    assert "alpha" in [s["alias"] for s in completion.model_extra["bench"]["seats"]]


def test_a_bare_200_with_no_text_does_not_restore_a_retired_model(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(410, "Gone."))
    gw.ask("bench/duo")
    sim.set(served("alpha"), empty=True)
    clock.advance(86400)
    wait_until(lambda: len(sim.log(served("alpha"))) == 2)
    wait_until(lambda: gw.runtime.model_health.book.of("alpha").next_trial == clock.now() + 86400)
    assert health_of(gw, "alpha") == "retired"


def test_nothing_is_probed_on_a_first_start(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    clock.advance(10**6)
    assert gw.runtime.model_health.probes_due() == []
    assert sim.log() == []

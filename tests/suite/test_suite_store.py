"""One suite run at a time across the gateways sharing a record store (workers, replicas), with
SQLite and with PostgreSQL: the lock is in the store, so a second gateway is refused while the
first runs, and its figures are what the first gateway's answers say."""

from __future__ import annotations

import asyncio

import pytest

from gateway.store.postgres.store import PostgresStore
from gateway.store.sqlite.store import SqliteStore
from tests.helpers.bench import assert_openai_error, served
from tests.suite.test_suite_runs import TASKS, finished, run, suite_raw


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_two_gateways_on_one_store_run_one_suite_at_a_time(
    make_gateway, sim, tmp_path, engine, request
):
    store = request.getfixturevalue("pg_url") if engine == "postgresql" else tmp_path / "one.db"
    raw = suite_raw(sim.url, tmp_path)
    first, second = make_gateway(raw, store=store), make_gateway(raw, store=store)
    sim.set(served("alpha"), answer="Line 2 adds one.\nFAULT: line 2", latency_s=0.5)
    going = run(first, models=["alpha"], tasks=TASKS)
    assert second.http.get("/bench/suite").json()["running"] is True
    refused = second.http.post("/bench/suite/run", json={"models": ["gamma"]})
    assert going in assert_openai_error(refused, 409)["message"]
    done = finished(second, going)
    assert (done["state"], done["asked"], done["answered"]) == ("done", 3, 3)
    review = second.http.get("/bench/suite").json()["models"]["alpha"]["review"]
    assert (review["found"], review["of"], review["false_alarms"]) == (1, 1, 1)
    assert sim.log(served("gamma")) == []
    finished(second, run(second, models=["gamma"], tasks=["t-mean-bug"]))  # the lock was freed


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_the_lock_is_a_lease_a_dead_runs_lapses_and_only_its_holder_renews_or_frees(
    tmp_path, engine, request
):
    async def check() -> None:
        if engine == "postgresql":
            store = PostgresStore(request.getfixturevalue("pg_url"))
        else:
            store = SqliteStore(tmp_path / "lease.db")
        await store.open()
        try:
            assert await store.take_suite_lock("a", 100.0, 0.0)
            assert not await store.take_suite_lock("b", 160.0, 60.0)  # a holds it
            assert await store.take_suite_lock("a", 160.0, 60.0)  # a renews
            assert await store.suite_holder(100.0) == "a"
            await store.free_suite_lock("b")  # not b's to free
            assert await store.suite_holder(100.0) == "a"
            assert await store.take_suite_lock("b", 300.0, 200.0)  # a's lease lapsed
            await store.free_suite_lock("b")
            assert await store.suite_holder(200.0) is None
        finally:
            await store.close()

    asyncio.run(check())

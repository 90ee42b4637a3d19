"""Each record store alone (SQLite, and PostgreSQL on a throwaway server): batched writes, a bad
row failing alone, reads of what was written."""

from __future__ import annotations

import asyncio
import sqlite3

import psycopg
import pytest

from gateway.store import SqliteStore
from gateway.store.postgres import PostgresStore


def panel(i: int) -> dict:
    return {
        "id": f"p{i}",
        "created": 1.0,
        "requested_model": "bench/x",
        "collection": "x",
        "shape": "general",
        "shape_by": "default",
        "prompt": "hi",
        "key_name": "local",
        "skipped": [],
        "notes": [],
        "reserves": [],
    }


def call(panel_id: str, seat: str) -> dict:
    return {
        "id": f"{panel_id}.{seat}",
        "panel_id": panel_id,
        "seat": seat,
        "alias": "a",
        "model": "openai/a",
        "connection": "c",
        "shape": "general",
        "status": "ok",
        "answer": "yes",
        "started": 2.0,
        "finished": 3.0,
        "seconds": 1.0,
    }


class CountingStore(SqliteStore):
    """The real store, counting the transactions its writer thread commits."""

    batches: list[int]

    def _insert_all(self, batch) -> None:
        self.batches = [*getattr(self, "batches", []), len(batch)]
        super()._insert_all(batch)


class CountingPostgres(PostgresStore):
    """The real store, counting the transactions it commits."""

    batches: list[int]

    async def _insert_all(self, batch) -> None:
        self.batches = [*getattr(self, "batches", []), len(batch)]
        await super()._insert_all(batch)


@pytest.fixture(params=["sqlite", "postgresql"])
def new_store(request, tmp_path):
    """Make a store of each kind (not yet open); `.integrity` is its engine's IntegrityError."""

    def make(name: str = "s", counting: bool = False):
        if request.param == "sqlite":
            return (CountingStore if counting else SqliteStore)(tmp_path / f"{name}.db")
        url = request.getfixturevalue("pg_url")
        return (CountingPostgres if counting else PostgresStore)(url)

    make.integrity = sqlite3.IntegrityError if request.param == "sqlite" else psycopg.IntegrityError
    return make


def test_concurrent_writes_are_batched_and_a_bad_row_fails_alone(new_store):
    async def scenario():
        store = new_store(counting=True)
        await store.open()
        try:
            await asyncio.gather(*(store.add_panel(panel(i)) for i in range(50)))
            assert sum(store.batches) == 50 and len(store.batches) < 50  # batched
            writes = [store.add_call(call(f"p{i}", "member1")) for i in range(50)]
            writes.append(store.add_call(call("p-missing", "member1")))  # no such panel
            outcomes = await asyncio.gather(*writes, return_exceptions=True)
            assert all(o is None for o in outcomes[:50])
            assert isinstance(outcomes[50], new_store.integrity)
            found = await store.panel("p7")
            assert [s["id"] for s in found["seats"]] == ["p7.member1"]
            assert (await store.call("p7.member1"))["collection"] == "x"
            page = await store.panels_page(100)
            assert len(page["panels"]) == 50 and page["owed"] == 50
            assert sum(len(p["seats"]) for p in page["panels"]) == 50
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_duplicate_key_name_is_refused(new_store):
    async def scenario():
        store = new_store("k")
        await store.open()
        try:
            key = {
                "name": "a",
                "digest": "d1",
                "last4": "abcd",
                "collections": None,
                "rpm": None,
                "created": 1.0,
            }
            assert await store.add_key(key) is True
            assert await store.add_key({**key, "digest": "d2"}) is False
            assert (await store.key_by_digest("d1"))["name"] == "a"
            assert await store.revoke_key("a") is True
            assert await store.key_by_digest("d1") is None
        finally:
            await store.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("window", [4096, 1000])
def test_a_learned_window_only_goes_down(new_store, window):
    async def scenario():
        store = new_store("w")
        await store.open()
        try:
            await store.learn_window("a", 2000)
            await store.learn_window("a", window)
            return await store.learned_windows()
        finally:
            await store.close()

    assert asyncio.run(scenario()) == {"a": min(2000, window)}


@pytest.mark.parametrize(
    "bad",
    [
        {"tokens_in": 2**70},  # an int SQLite cannot bind: OverflowError, not a sqlite3.Error
        {"answer": object()},  # a value no adapter knows
    ],
    ids=["int-too-large", "unbindable-object"],
)
def test_a_batch_that_fails_to_bind_fails_its_own_writes_and_later_writes_still_land(
    new_store, bad
):
    async def scenario():
        store = new_store("f")
        await store.open()
        try:
            await store.add_panel(panel(1))
            together = [
                store.add_call({**call("p1", "member1"), **bad}),
                store.add_call(call("p1", "member2")),
            ]
            # (a guard only: a writer that hangs fails the test instead of the whole run)
            first, second = await asyncio.wait_for(
                asyncio.gather(*together, return_exceptions=True), timeout=30
            )
            assert isinstance(first, Exception) and second is None
            await asyncio.wait_for(store.add_call(call("p1", "member3")), timeout=30)
            found = await store.panel("p1")
            return [s["id"] for s in found["seats"]]
        finally:
            await store.close()

    assert asyncio.run(scenario()) == ["p1.member2", "p1.member3"]

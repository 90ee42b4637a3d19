"""Seat rows into PostgreSQL as one statement per batch (gateway/store/pg_batch.py), on a
throwaway server: a panel and its seats in one statement keep their foreign key, a batch
bigger than a chunk is several statements (in one transaction), route mode's lists come back
as written."""

from __future__ import annotations

import asyncio

from gateway.store import pg_batch
from gateway.store.postgres import PostgresStore
from tests.test_store import call, panel


def _both(n: int) -> list[tuple[str, dict]]:
    rows: list[tuple[str, dict]] = []
    for i in range(n):
        rows += [("panels", panel(i)), *(("calls", call(f"p{i}", f"member{s}")) for s in (1, 2))]
    return rows


def test_a_batch_of_panels_and_their_seats_is_one_statement_of_a_fixed_shape():
    small, other = pg_batch.statements(_both(2)), pg_batch.statements(_both(7))
    assert len(small) == len(other) == 1
    assert small[0][0] == other[0][0] and small[0][0].startswith(b"WITH")
    assert len(small[0][1]) == len(pg_batch.FIELDS["panels"]) + len(pg_batch.FIELDS["calls"])
    big = pg_batch.statements([("calls", call("p0", f"s{i}")) for i in range(2500)])
    assert [len(params[0]) for _, params in big] == [1000, 1000, 500]


def test_panels_and_seats_written_together_read_back_whole(pg_url):
    async def scenario() -> list:
        store = PostgresStore(pg_url)
        await store.open()
        try:
            route_seat = {**call("p2", "member1"), "failed_over": [{"alias": "b", "why": "429"}]}
            await store.writes._insert([*_both(2), ("panels", panel(2)), ("calls", route_seat)])
            await store.writes._insert(_both(3), skip_existing=True)  # written back twice
            return [await store.panel(f"p{i}") for i in range(3)]
        finally:
            await store.close()

    found = asyncio.run(scenario())
    assert [[s["id"] for s in p["seats"]] for p in found[:2]] == [
        ["p0.member1", "p0.member2"],
        ["p1.member1", "p1.member2"],
    ]
    assert found[0]["notes"] == [] and found[0]["seats"][0]["seconds"] == 1.0
    assert found[2]["seats"][0]["failed_over"] == [{"alias": "b", "why": "429"}]
    assert [s["id"] for s in found[2]["seats"]] == ["p2.member1", "p2.member2"]

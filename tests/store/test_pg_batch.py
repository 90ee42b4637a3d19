"""Seat rows into PostgreSQL as one statement per batch (gateway/store/postgres/batch.py), on a
throwaway server: a panel and its seats in one statement keep their foreign key, a batch
bigger than a chunk is several statements (in one transaction), route mode's lists come back
as written."""

from __future__ import annotations

import asyncio

from gateway.store.postgres import PostgresStore
from gateway.store.postgres import batch as pg_batch
from tests.helpers.records import call, panel


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
            rows = [*_both(2), ("panels", panel(2)), ("calls", route_seat)]
            await store.link.writes._insert(rows)
            await store.link.writes._insert(_both(3), skip_existing=True)  # written back twice
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


def test_seat_rows_arriving_within_the_gathering_window_are_one_transaction_each_written_on_return(
    pg_url,
):
    async def scenario() -> tuple[int, list[list[str]], int]:
        store = PostgresStore(pg_url, gather_s=0.5)
        await store.open()
        try:

            async def write(turns: int, table: str, row: dict) -> list[str]:
                for _ in range(turns):
                    await asyncio.sleep(0)  # each writer arrives a loop turn after the last
                await store.link.writes.write(table, row)
                found = await store.panel("p0")  # returned: its row is committed
                return [] if found is None else [s["id"] for s in found["seats"]]

            seats = [call("p0", f"member{s}") for s in range(1, 6)]
            await store.link.writes.write("panels", panel(0))  # a panel row waits for no window
            order = [("calls", seat) for seat in seats]
            seen = await asyncio.gather(*(write(i, *item) for i, item in enumerate(order)))
            async with store.link.pool.connection() as db:
                cursor = await db.execute("SELECT COUNT(DISTINCT xmin::text) AS n FROM calls")
                transactions = (await cursor.fetchone())["n"]
            store.link.writes.gather_s = 0.0  # no window: a lone row goes at once, its own batch
            await store.link.writes.write("calls", call("p0", "member6"))
            async with store.link.pool.connection() as db:
                cursor = await db.execute("SELECT COUNT(DISTINCT xmin::text) AS n FROM calls")
                later = (await cursor.fetchone())["n"]
            return transactions, seen, later
        finally:
            await store.close()

    transactions, seen, later = asyncio.run(scenario())
    assert transactions == 1  # the five seats: one statement, one commit
    assert all(len(ids) == 5 for ids in seen)  # no writer returned before the batch committed
    assert later == 2


def test_a_panel_row_ends_the_window_and_takes_the_seat_rows_gathered_with_it(pg_url):
    async def scenario() -> tuple[float, int]:
        store = PostgresStore(pg_url, gather_s=30.0)  # only a panel row can end this window
        await store.open()
        try:
            await store.link.writes._insert([("panels", panel(0))])
            seat = asyncio.ensure_future(store.link.writes.write("calls", call("p0", "member1")))
            for _ in range(3):
                await asyncio.sleep(0)
            assert not seat.done()  # gathering
            began = asyncio.get_running_loop().time()
            await asyncio.wait_for(store.link.writes.write("panels", panel(1)), 10)
            waited = asyncio.get_running_loop().time() - began
            await asyncio.wait_for(seat, 10)
            async with store.link.pool.connection() as db:
                cursor = await db.execute(
                    "SELECT COUNT(DISTINCT xmin::text) AS n FROM "
                    "(SELECT xmin FROM panels WHERE id = 'p1' "
                    "UNION ALL SELECT xmin FROM calls) AS rows"
                )
                together = (await cursor.fetchone())["n"]
            return waited, together
        finally:
            await store.close()

    waited, together = asyncio.run(scenario())
    assert waited < 10  # not the window's 30 s
    assert together == 1  # the seat row went in the panel row's statement

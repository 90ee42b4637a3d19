"""Each record store alone (SQLite, and PostgreSQL on a throwaway server): batched writes, a bad
row failing alone, reads of what was written."""

from __future__ import annotations

import asyncio
import sqlite3

import psycopg
import pytest

from gateway.store.postgres import PostgresStore
from gateway.store.sqlite import SqliteStore
from tests.helpers.records import call, panel


class CountingStore(SqliteStore):
    """The real store, counting the transactions its writer thread commits."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.batches: list[int] = []
        insert = self.writer.insert

        def counted(batch, *args, **options) -> None:
            self.batches.append(len(batch))
            insert(batch, *args, **options)

        self.writer.insert = counted  # type: ignore[method-assign]


class CountingPostgres(PostgresStore):
    """The real store, counting the transactions its seat writes commit."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.batches: list[int] = []
        insert = self.link.writes._insert

        async def counted(rows, **options) -> None:
            self.batches.append(len(rows))
            await insert(rows, **options)

        self.link.writes._insert = counted  # type: ignore[method-assign]


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
            failed = [o for o in outcomes[:50] if o is not None]
            assert not failed, failed[:2]
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


def test_both_stores_answer_every_read_alike(tmp_path, pg_url):
    """The same writes to SQLite and to PostgreSQL: every read of the protocol gives the same
    answer (pages and cursors, owner scoping, verdict history, standings, usage per day in a
    time zone, learned limits and windows, keys)."""
    day = 1_741_300_000.0  # 2025-03-06 22:26 UTC: 23:26 in Paris, the next hour another day

    def seat(panel_id: str, n: int, status: str, started: float, **more) -> dict:
        row = {**call(panel_id, f"member{n}"), "status": status, "started": started}
        return {**row, "alias": "ab"[n % 2], "tokens_in": 10 * n, "tokens_out": n, **more}

    async def fill(store) -> dict:
        await store.open()
        try:
            for i, key_name in enumerate(["local", "ci-bot", "local"]):
                await store.add_panel({**panel(i), "created": day + i * 3600, "key_name": key_name})
                await asyncio.gather(
                    store.add_call(seat(f"p{i}", 1, "ok", day + i * 3600)),
                    store.add_call(seat(f"p{i}", 2, "error", day + i * 3600 + 1, error="boom")),
                    store.add_call(seat(f"p{i}", 3, "cooling", day + i * 3600 + 2)),
                    store.add_call(
                        {**seat(f"p{i}", 4, "ok", day + i * 3600 + 3), "seat": "merger"}
                    ),
                )
            verdicts = [
                await store.record_verdict({"call": "p0.member1", "useful": True, "note": "n"}),
                await store.record_verdict({"call": "p0.member1", "useful": True, "note": "n"}),
                await store.record_verdict({"call": "p0.member1", "useful": False, "real": ["r"]}),
                await store.record_verdict({"call": "p1.member1", "useful": True}, owner="local"),
                await store.record_verdict({"call": "p1.member1", "useful": True}, owner="ci-bot"),
            ]
            key = {"name": "ci-bot", "digest": "d", "last4": "abcd", "collections": ["x"]}
            await store.add_key({**key, "rpm": 5, "created": 1.0})
            await store.touch_key("ci-bot", 2.0)
            await store.learn_window("a", 4096)
            await store.learn_window("a", 8192)
            await store.learn_limit({"alias": "a", "until": day + 99, "why": "rpd", "source": "s"})
            await store.learn_limit({"alias": "b", "until": day - 1, "why": "rpm", "source": "s"})
            first = await store.panels_page(2)
            marker = await store.change_marker()
            await store.add_panel(panel(9))
            return {
                "verdicts": verdicts,
                "panels": [await store.panel(f"p{i}") for i in range(3)],
                "scoped": [await store.panel("p1", owner="local"), await store.call("p1.member1")],
                "first": first,
                "next": await store.panels_page(2, before=first["next"]),
                "owed": await store.panels_page(10, owed=True, owner="local"),
                "verdict states": [
                    await store.verdict_states(asked, owner=owner)
                    for asked in (["p0.member1", "p0.member2", "p2.member1", "p1.member1", "x"],)
                    for owner in ("local", None)
                ],
                "owed seats": [await store.owed("local"), await store.owed(limit=1)],
                "marker moved": marker != await store.change_marker() and min(marker) > 0,
                "standings": {k: sorted(v, key=str) for k, v in (await store.standings()).items()},
                "keys": [await store.keys(), await store.key_by_digest("d")],
                "windows": await store.learned_windows(),
                "limits": await store.learned_limits(day),
                "days": sorted(await store.day_counts(day + 3600), key=str),
                "usage": await store.usage(day - 86400, day + 86400, "Europe/Paris"),
                "usage of ci-bot": await store.usage(day - 86400, day + 86400, "UTC", "ci-bot"),
            }
        finally:
            await store.close()

    def timeless(found):
        """The same, but for the moment a verdict was written (the wall clock's)."""
        if isinstance(found, dict):
            drop = "useful" in found
            return {k: timeless(v) for k, v in found.items() if not (drop and k == "created")}
        if isinstance(found, list | tuple):
            return [timeless(v) for v in found]
        return found

    on_sqlite = timeless(asyncio.run(fill(SqliteStore(tmp_path / "same.db"))))
    on_postgres = timeless(asyncio.run(fill(PostgresStore(pg_url))))
    for name, found in on_sqlite.items():
        assert on_postgres[name] == found, name
    assert [d for d in on_sqlite["usage"]][0]["day"] == "2025-03-06"
    assert {d["day"] for d in on_sqlite["usage"]} == {"2025-03-06", "2025-03-07"}
    assert on_sqlite["marker moved"] is True and on_sqlite["scoped"][0] is None
    assert on_sqlite["first"]["next"] == "p1"
    assert [p["id"] for p in on_sqlite["next"]["panels"]] == ["p0", "p9"]
    assert [p["id"] for p in on_sqlite["owed"]["panels"]] == ["p2"]  # p0 judged, p1 not local's
    assert len(on_sqlite["standings"]["verdicts"]) == 1 and on_sqlite["limits"][0]["alias"] == "a"


def test_a_blind_verdict_stays_blind_until_its_judgement_changes(new_store):
    """`blind` holds for a seat's first verdict only (a judged seat shows its model); a later
    one keeping the same `useful` keeps the flag, one changing it is open. Both stores keep it
    in the record, the page of panels and the standings."""

    async def scenario():
        store = new_store()
        await store.open()
        try:
            await store.add_panel(panel(0))
            for n, alias in ((1, "a"), (2, "b"), (3, "a")):
                await store.add_call({**call("p0", f"member{n}"), "alias": alias})
            steps = [
                ({"call": "p0.member1", "useful": True, "blind": True}, True),
                ({"call": "p0.member1", "useful": True, "note": "seen now"}, True),  # a note
                ({"call": "p0.member2", "useful": False, "blind": True}, True),
                ({"call": "p0.member2", "useful": True, "blind": True}, False),  # changed
                ({"call": "p0.member3", "useful": True}, False),  # open from the start
            ]
            for verdict, blind in steps:
                written, _ = await store.record_verdict(verdict)
                assert written
                found = (await store.call(verdict["call"]))["verdict"]
                assert (found["useful"], found["blind"]) == (verdict["useful"], blind), verdict
            seats = (await store.panels_page(5))["panels"][0]["seats"]
            standings = sorted((await store.standings())["verdicts"], key=lambda r: r["alias"])
            return [s["verdict"]["blind"] for s in seats], [
                (r["alias"], r["useful"], r["judged"], r["blind_useful"], r["blind_judged"])
                for r in standings
            ]
        finally:
            await store.close()

    seats, standings = asyncio.run(scenario())
    assert seats == [True, False, False]
    assert standings == [("a", 2, 2, 1, 1), ("b", 1, 1, 0, 0)]


def test_both_stores_know_the_same_named_migrations():
    from gateway.store.postgres import migrations as pg_migrations
    from gateway.store.sqlite import migrations

    assert [name for name, _ in pg_migrations.POSTGRES_MIGRATIONS] == [
        name for name, _ in migrations.MIGRATIONS
    ]


PLANNED_PANELS = 10_000  # of five seats: a store where reading calls whole costs more than a range


async def read_seats_by_panel(store) -> None:
    """Every read that finds seats by their panel: a panel's own, a page's seats, and the owed
    pages' test that a panel has a seat owed a verdict (after a cursor, and for one key)."""
    for i in range(3):
        assert len((await store.panel(f"p{i:012x}"))["seats"]) == 5
    page = await store.panels_page(20)
    assert [len(p["seats"]) for p in page["panels"]] == [5] * 20
    assert len((await store.panels_page(20, before=page["next"], owed=True))["panels"]) == 20
    assert len((await store.panels_page(20, owed=True, owner="local"))["panels"]) == 20


def test_sqlite_reads_a_panels_seats_as_a_range_of_the_calls_primary_key(tmp_path):
    """A seat's id is `<panel>.<seat>`: no index on panel_id is needed, nor kept (0008), and
    no read by panel scans calls whole. Each statement the store runs is explained."""
    path = tmp_path / "planned.db"
    panel_id = "printf('p%012x', n)"
    numbers = (
        "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i "
        f"WHERE n < {PLANNED_PANELS - 1}) "
    )

    async def scenario() -> list[str]:
        store = SqliteStore(path)
        await store.open()
        try:
            with sqlite3.connect(path) as db:
                db.execute(
                    "INSERT INTO panels (id, created, requested_model, collection, shape, "
                    "shape_by, prompt, key_name) " + numbers + f"SELECT {panel_id}, n, 'bench/x', "
                    "'x', 'general', 'default', 'hi', 'local' FROM i"
                )
                db.execute(
                    "INSERT INTO calls (id, panel_id, seat, alias, model, connection, shape, "
                    "status, answer, started) " + numbers + f"SELECT {panel_id} || '.member' || s, "
                    f"{panel_id}, 'member' || s, 'a', 'openai/a', 'c', 'general', 'ok', 'yes', "
                    "n + s / 10.0 FROM i, (SELECT 1 AS s UNION SELECT 2 UNION SELECT 3 UNION "
                    "SELECT 4 UNION SELECT 5) ORDER BY n, s"
                )
                db.execute("ANALYZE")
            ran: list[str] = []
            await store.writer.run(lambda: store.writer.db.set_trace_callback(ran.append))
            await read_seats_by_panel(store)
            return ran
        finally:
            await store.close()

    ran = asyncio.run(scenario())
    with sqlite3.connect(path) as db:
        indexes = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'calls'"
        ).fetchall()
        assert {name for (name,) in indexes} == {"sqlite_autoindex_calls_1", "calls_by_started"}
        by_panel = [sql for sql in ran if "c.id >= " in sql]
        assert any("EXISTS (SELECT 1 FROM calls c" in sql for sql in by_panel)
        assert any(sql.startswith("WITH wanted") for sql in by_panel)
        assert any(sql.startswith('SELECT c."id", c."panel_id"') for sql in by_panel)
        for sql in by_panel:
            plan = [line for *_, line in db.execute(f"EXPLAIN QUERY PLAN {sql}")]
            assert "SEARCH c USING INDEX sqlite_autoindex_calls_1 (id>? AND id<?)" in plan, plan
            assert not [line for line in plan if line.startswith("SCAN c")], plan


def test_a_panel_whose_id_holds_a_dot_keeps_its_own_seats(new_store):
    """Ids the gateway makes never hold a '.', but a store may be given any: a panel `p1.x`'s
    seat sorts in `p1`'s range of ids, and is still read as `p1.x`'s only."""

    async def scenario():
        store = new_store()
        await store.open()
        try:
            await store.add_panel(panel(1))
            await store.add_panel({**panel(1), "id": "p1.x"})
            await store.add_call(call("p1", "member1"))
            await store.add_call(call("p1.x", "member1"))
            await store.record_verdict({"call": "p1.member1", "useful": True})
            assert [s["id"] for s in (await store.panel("p1"))["seats"]] == ["p1.member1"]
            assert [s["id"] for s in (await store.panel("p1.x"))["seats"]] == ["p1.x.member1"]
            page = await store.panels_page(10)
            seats = {p["id"]: [s["call"] for s in p["seats"]] for p in page["panels"]}
            assert seats == {"p1": ["p1.member1"], "p1.x": ["p1.x.member1"]}
            owed = await store.panels_page(10, owed=True)
            assert [p["id"] for p in owed["panels"]] == ["p1.x"]
        finally:
            await store.close()

    asyncio.run(scenario())

"""Gateways on `store: postgresql://...` (a throwaway server, tests/helpers/pg.py): every seat
recorded and read back, verdicts with history, keys; replicas starting at once on an empty database;
and `bench-gateway store copy` from a SQLite store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading

import openai
import psycopg
import yaml

from gateway.cli.main import main
from gateway.store.sqlite import SqliteStore
from gateway.store.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from tests.helpers.bench import bench_raw
from tests.helpers.records import call, panel

MIGRATIONS = [
    "0001_panels_calls_verdicts",
    "0002_gateway_keys",
    "0003_learned_windows",
    "0004_dashboard_indexes",
    "0005_learned_limits_and_usage",
    "0006_route_turns",
    "0007_seat_indexes_reads_use",
    "0008_panel_seats_by_call_id",
    "0009_blind_verdicts",
    "0010_dropped_hints",
    "0011_failure_classes",
    "0012_model_health",
    "0013_suite",
]


def rows(url: str, sql: str, *args) -> list[tuple]:
    with psycopg.connect(url) as db:
        return db.execute(sql.encode(), args).fetchall()


def create_key(tmp_path, raw: dict, name: str, capsys) -> str:
    """`bench-gateway keys create NAME` on *raw*'s store; returns the key it printed once."""
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump(raw))
    capsys.readouterr()
    assert main(["keys", "create", name, "--config", str(config)]) == 0
    return capsys.readouterr().out.strip()


def test_a_gateway_on_postgresql_records_every_seat_verdicts_and_history(make_gateway, pg_url):
    gw = make_gateway(store=pg_url)
    completion, _ = gw.ask("bench/trio", content="Check the retry loop.")
    bench = completion.model_extra["bench"]
    panel = gw.http.get(f"/bench/panels/{bench['panel']}").json()
    assert (panel["collection"], panel["key_name"]) == ("trio", "local")
    assert panel["prompt"] == "Check the retry loop."
    recorded = {s["id"]: s for s in panel["seats"]}
    assert set(recorded) == {s["call"] for s in bench["seats"]} and len(recorded) == 5
    for seat in bench["seats"]:
        row = recorded[seat["call"]]
        assert row["alias"] == seat["alias"] and row["status"] == "ok"
        assert row["answer"] == seat["answer"] and row["tokens_out"] > 0
        assert row["connection"] == seat["connection"] and row["verdict"] is None

    call = bench["seats"][0]["call"]
    verdicts = [
        {"call": call, "useful": True, "note": "good"},
        {"call": call, "useful": True, "note": "good"},  # the same again: not a new row
        {"call": call, "useful": False, "real": ["claim a"], "false": ["claim b"]},
    ]
    answers = [gw.http.post("/bench/verdict", json=v).json()["recorded"] for v in verdicts]
    assert answers == [True, False, True]
    record = gw.http.get(f"/bench/calls/{call}").json()
    assert record["verdict"]["useful"] is False and record["collection"] == "trio"
    assert record["verdict"]["real"] == ["claim a"] and record["verdict"]["false"] == ["claim b"]
    history = rows(pg_url, "SELECT useful FROM verdicts WHERE call_id = %s ORDER BY id", call)
    assert history == [(1,), (0,)]
    assert (
        gw.http.post("/bench/verdict", json={"call": "pnope.member1", "useful": True}).status_code
        == 404
    )

    page = gw.http.get("/bench/panels", params={"owed": "true"}).json()
    assert [p["id"] for p in page["panels"]] == [bench["panel"]]
    alpha = next(m for m in gw.http.get("/bench/models").json()["models"] if m["alias"] == "alpha")
    assert (alpha["seated"], alpha["answered"], alpha["useful"], alpha["judged"]) == (1, 1, 0, 1)
    assert rows(pg_url, "SELECT name FROM migrations ORDER BY name") == [(n,) for n in MIGRATIONS]


def test_keys_on_postgresql_scope_the_records(make_gateway, sim, pg_url, tmp_path, capsys):
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = pg_url
    key = create_key(tmp_path, raw, "ci-bot", capsys)
    gw = make_gateway(raw, store=pg_url)
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0, timeout=30)
    try:
        answered = client.chat.completions.create(
            model="bench/trio", messages=[{"role": "user", "content": "hi"}]
        )
    finally:
        client.close()
    panel_id = answered.model_extra["bench"]["panel"]
    mine = gw.http.get(f"/bench/panels/{panel_id}", headers={"authorization": f"Bearer {key}"})
    assert mine.status_code == 200 and mine.json()["key_name"] == "ci-bot"
    assert gw.http.get(f"/bench/panels/{panel_id}").status_code == 401
    (last_used,) = rows(pg_url, "SELECT last_used FROM gateway_keys WHERE name = 'ci-bot'")[0]
    assert last_used is not None
    assert main(["keys", "revoke", "ci-bot", "--config", str(tmp_path / "ci-bot.yaml")]) == 0
    refused = gw.http.get(f"/bench/panels/{panel_id}", headers={"authorization": f"Bearer {key}"})
    assert refused.status_code == 401


def test_two_gateways_starting_at_once_on_an_empty_database_migrate_it_once(make_gateway, pg_url):
    started: list = []
    threads = [
        threading.Thread(target=lambda: started.append(make_gateway(store=pg_url)))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(started) == 2
    ledger = rows(pg_url, "SELECT name FROM migrations ORDER BY name")
    assert ledger == [(n,) for n in MIGRATIONS]  # each applied once (name is the primary key)
    first, second = started
    completion, _ = first.ask("bench/trio")
    panel_id = completion.model_extra["bench"]["panel"]
    on_second = second.http.get(f"/bench/panels/{panel_id}").json()
    assert len(on_second["seats"]) == 5  # a panel answered on one is read on the other


def test_store_copy_moves_sqlite_records_once_and_a_gateway_reads_them(
    make_gateway, sim, pg_url, tmp_path, capsys
):
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'old.db'}"
    key = create_key(tmp_path, raw, "ci-bot", capsys)
    old = make_gateway(raw, store=tmp_path / "old.db")
    auth = {"authorization": f"Bearer {key}"}
    client = openai.OpenAI(base_url=f"{old.url}/v1", api_key=key, max_retries=0, timeout=30)
    try:
        panels = [
            client.chat.completions.create(
                model="bench/trio", messages=[{"role": "user", "content": f"q{i}"}]
            ).model_extra["bench"]
            for i in range(2)
        ]
    finally:
        client.close()
    call = panels[0]["seats"][0]["call"]
    for useful in (True, False):
        old.http.post("/bench/verdict", json={"call": call, "useful": useful}, headers=auth)
    old.close()

    capsys.readouterr()
    assert main(["store", "copy", "--from", raw["store"], "--to", pg_url]) == 0
    first = capsys.readouterr().out
    assert main(["store", "copy", "--from", raw["store"], "--to", pg_url]) == 0
    second = capsys.readouterr().out
    assert (
        "panels                  2 copied" in first and "calls                  10 copied" in first
    )
    assert (
        "verdicts                2 copied" in first and "gateway_keys            1 copied" in first
    )
    assert all(" 0 copied" in line for line in second.splitlines()), second
    assert rows(pg_url, "SELECT COUNT(*) FROM verdicts") == [(2,)]

    new = make_gateway(raw, store=pg_url)
    for bench in panels:
        panel = new.http.get(f"/bench/panels/{bench['panel']}", headers=auth).json()
        assert {s["id"] for s in panel["seats"]} == {s["call"] for s in bench["seats"]}
        assert panel["key_name"] == "ci-bot"
    record = new.http.get(f"/bench/calls/{call}", headers=auth).json()
    assert record["verdict"]["useful"] is False  # the newest of its history, in order
    again = new.http.post("/bench/verdict", json={"call": call, "useful": False}, headers=auth)
    assert again.json()["recorded"] is False
    assert (
        new.http.post(
            "/v1/chat/completions",
            json={"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]},
            headers=auth,
        ).status_code
        == 200
    )  # the copied key is accepted


def test_store_copy_keeps_blind_verdicts_and_reads_a_store_from_before_them_as_open(
    pg_url, tmp_path, capsys
):
    before = sqlite3.connect(tmp_path / "before.db")  # as the gateway left it before 0009
    before.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied REAL)")
    for name, script in SQLITE_MIGRATIONS[: MIGRATIONS.index("0009_blind_verdicts")]:
        before.executescript(script)
        before.execute("INSERT INTO migrations VALUES (?, 1.0)", (name,))
    rows_of = {"panels": panel(0), "calls": call("p0", "member1")}
    for table, row in rows_of.items():
        names = ", ".join(f'"{k}"' for k in row)
        values = [json.dumps(v) if isinstance(v, list) else v for v in row.values()]
        before.execute(
            f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})", values
        )
    before.execute(
        "INSERT INTO verdicts (call_id, useful, created, key_name) VALUES ('p0.member1', 1, 5, 'x')"
    )
    before.commit()
    before.close()

    async def judged_blind() -> None:
        store = SqliteStore(tmp_path / "after.db")
        await store.open()
        try:
            await store.add_panel(panel(1))
            await store.add_call(call("p1", "member1"))
            await store.record_verdict({"call": "p1.member1", "useful": False, "blind": True})
        finally:
            await store.close()

    asyncio.run(judged_blind())
    for name in ("before", "after"):
        assert (
            main(["store", "copy", "--from", f"sqlite:///{tmp_path}/{name}.db", "--to", pg_url])
            == 0
        )
    assert "verdicts                1 copied" in capsys.readouterr().out
    assert rows(pg_url, "SELECT call_id, useful, blind FROM verdicts ORDER BY call_id") == [
        ("p0.member1", 1, 0),
        ("p1.member1", 0, 1),
    ]


def test_store_copy_refuses_urls_it_cannot_copy_between(pg_url, tmp_path, capsys):
    assert main(["store", "copy", "--from", pg_url, "--to", pg_url]) == 2
    assert main(["store", "copy", "--from", f"sqlite:///{tmp_path}/none.db", "--to", pg_url]) == 1
    assert "no SQLite store" in capsys.readouterr().err


def test_each_index_a_seat_row_pays_for_serves_a_read(pg_url):
    """Every insert into calls updates each of its indexes: only those a read uses are left,
    and the newest answered seats (the owed count) are read from calls_by_started."""
    import asyncio

    from gateway.store.postgres import PostgresStore

    async def migrated() -> None:
        store = PostgresStore(pg_url)
        await store.open()
        await store.close()

    asyncio.run(migrated())
    names = {name for (name,) in rows(pg_url, "SELECT indexname FROM pg_indexes "
                                               "WHERE tablename = 'calls'")}  # fmt: skip
    assert names == {"calls_pkey", "calls_seq_key", "calls_by_started"}
    with psycopg.connect(pg_url) as db:
        db.execute("SET enable_seqscan = off")  # (a table this small is read whole otherwise)
        plan = db.execute(
            "EXPLAIN SELECT c.id, c.seat FROM calls c WHERE c.status = 'ok' "
            "ORDER BY c.started DESC LIMIT 200"
        ).fetchall()
    assert "calls_by_started" in " ".join(line for (line,) in plan)


def test_postgresql_reads_a_panels_seats_as_a_range_of_the_calls_primary_key(pg_server, pg_url):
    """A seat's id is `<panel>.<seat>` and calls' ids compare byte by byte: no index on
    panel_id is needed, nor kept (0008), and no read by panel scans calls whole. auto_explain
    writes the plan of each statement the store runs to the server's log, read here."""
    import asyncio
    import os

    from gateway.store.postgres import PostgresStore
    from tests.store.test_stores import PLANNED_PANELS, read_seats_by_panel

    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as db:  # for the sessions opened from now on
        db.execute(f"ALTER DATABASE {database} SET session_preload_libraries = 'auto_explain'")
        db.execute(f"ALTER DATABASE {database} SET auto_explain.log_min_duration = 0")
    log = os.path.join(pg_server.root, "log")

    async def scenario() -> int:
        store = PostgresStore(pg_url)
        await store.open()
        try:
            panel_id = "'p' || lpad(to_hex(i), 12, '0')"
            with psycopg.connect(pg_url, autocommit=True) as db:
                db.execute(
                    "INSERT INTO panels (id, created, requested_model, collection, shape, "
                    f"shape_by, prompt, key_name) SELECT {panel_id}, i, 'bench/x', 'x', "
                    "'general', 'default', 'hi', 'local' "
                    f"FROM generate_series(0, {PLANNED_PANELS - 1}) AS i".encode()
                )
                db.execute(
                    "INSERT INTO calls (id, panel_id, seat, alias, model, connection, shape, "
                    f"status, answer, started) SELECT {panel_id} || '.member' || s, {panel_id}, "
                    "'member' || s, 'a', 'openai/a', 'c', 'general', 'ok', 'yes', i + s / 10.0 "
                    f"FROM generate_series(0, {PLANNED_PANELS - 1}) AS i, "
                    "generate_series(1, 5) AS s ORDER BY i, s".encode()
                )
                db.execute("VACUUM ANALYZE")
            began = os.path.getsize(log)
            await read_seats_by_panel(store)
            return began
        finally:
            await store.close()

    began = asyncio.run(scenario())
    with open(log, encoding="utf-8") as found:
        found.seek(began)
        plans = found.read().split("LOG:  duration: ")
    by_panel = [plan for plan in plans if "Query Text:" in plan and "c.id >= " in plan]
    assert any("EXISTS (SELECT 1 FROM calls c" in plan for plan in by_panel)
    assert any("unnest($1::text[])" in plan for plan in by_panel)
    assert any("FROM calls c WHERE c.id" in plan for plan in by_panel)
    for plan in by_panel:
        assert "Index Scan using calls_pkey on calls c" in plan, plan
        assert "Seq Scan on calls" not in plan, plan

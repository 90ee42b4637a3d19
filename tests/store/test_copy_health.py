"""`bench-gateway store copy` takes each model's health and its events along (contract §18,
migration 0012_model_health), SQLite to PostgreSQL and back: a model retired or benched on one
stays so on the other, and a copy run again doubles nothing and brings a newer health across."""

from __future__ import annotations

import contextlib
import sqlite3

import psycopg

from gateway.cli.main import main
from gateway.store.sqlite.migrations import MIGRATIONS
from tests.health.test_bench_keeps_itself import answers, duo_raw, skipped_alpha
from tests.helpers.bench import served

HEALTH = "SELECT alias, health, why, next_trial, by_hand FROM model_health ORDER BY alias"
EVENTS = "SELECT alias, health, why, at FROM health_events ORDER BY at, alias"


def on_sqlite(path, sql: str) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(sql).fetchall()


def on_postgres(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as db:
        return db.execute(sql.encode()).fetchall()


def copied(capsys, source: str, target: str) -> dict[str, int]:
    """Run the command; rows copied per table, as it printed them."""
    capsys.readouterr()
    assert main(["store", "copy", "--from", source, "--to", target]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    return {line[0]: int(line[1]) for line in lines}


def test_a_retired_and_a_benched_model_stay_so_when_the_store_moves_to_postgresql(
    make_gateway, sim, pg_url, tmp_path, capsys
):
    path = tmp_path / "old.db"
    raw = duo_raw(sim.url)
    old = make_gateway(raw, store=path)
    sim.set(served("alpha"), **answers(410, "Gone."))
    sim.set(served("gamma"), **answers(401, "Unauthorized"))
    old.ask("bench/duo")
    old.close()
    kept = on_sqlite(path, HEALTH)
    assert [(alias, health) for alias, health, *_ in kept] == [
        ("alpha", "retired"),
        ("gamma", "benched"),
    ]

    first = copied(capsys, f"sqlite:///{path}", pg_url)
    assert (first["model_health"], first["health_events"]) == (2, 2)
    assert copied(capsys, f"sqlite:///{path}", pg_url)["health_events"] == 0  # nothing doubled
    assert on_postgres(pg_url, HEALTH) == kept
    assert on_postgres(pg_url, EVENTS) == on_sqlite(path, EVENTS)

    new = make_gateway(raw, store=pg_url)
    completion, _ = new.ask("bench/duo")
    assert skipped_alpha(completion)["why"] == f"retired: {kept[0][2]}"
    skipped = {s["alias"]: s["why"] for s in completion.model_extra["bench"]["skipped"]}
    assert skipped["gamma"].startswith("benched (next trial in ") and "signin" in skipped["gamma"]
    assert len(sim.log(served("alpha"))) == 1 and len(sim.log(served("gamma"))) == 1


def test_a_copy_run_again_brings_a_newer_health_across(make_gateway, sim, pg_url, tmp_path, capsys):
    path = tmp_path / "old.db"
    raw = duo_raw(sim.url)
    old = make_gateway(raw, store=path)
    sim.set(served("alpha"), **answers(410, "Gone."))
    old.ask("bench/duo")
    assert copied(capsys, f"sqlite:///{path}", pg_url)["model_health"] == 1
    assert old.http.post("/bench/models/alpha/restore").json()["health"] == "ok"
    old.close()

    again = copied(capsys, f"sqlite:///{path}", pg_url)
    assert (again["model_health"], again["health_events"]) == (1, 1)  # the restore, and its event
    assert on_postgres(pg_url, HEALTH) == [("alpha", "ok", None, None, 0)]
    assert [e[:2] for e in on_postgres(pg_url, EVENTS)] == [("alpha", "retired"), ("alpha", "ok")]
    sim.set(served("alpha"))
    completion, _ = make_gateway(raw, store=pg_url).ask("bench/duo")
    assert ("member1", "alpha", "ok") in [
        (s["seat"], s["alias"], s["status"]) for s in completion.model_extra["bench"]["seats"]
    ]


def test_a_store_from_before_model_health_copies_without_it(pg_url, tmp_path, capsys):
    before = tmp_path / "before.db"
    with contextlib.closing(sqlite3.connect(before)) as db:  # a store as 0001 left it
        db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied REAL)")
        db.executescript(MIGRATIONS[0][1])
        db.commit()
    assert copied(capsys, f"sqlite:///{before}", pg_url)["model_health"] == 0


def test_the_way_back_brings_a_postgresql_stores_records_and_health_into_sqlite(
    make_gateway, sim, pg_url, tmp_path, capsys
):
    raw = duo_raw(sim.url)
    on_pg = make_gateway(raw, store=pg_url)
    sim.set(served("alpha"), **answers(410, "Gone."))
    panel = on_pg.ask("bench/duo")[0].model_extra["bench"]
    call = next(s["call"] for s in panel["seats"] if s["status"] == "ok")
    assert on_pg.http.post("/bench/verdict", json={"call": call, "useful": True}).status_code == 200
    on_pg.close()

    path = tmp_path / "back" / "records.db"
    first = copied(capsys, pg_url, f"sqlite:///{path}")
    assert first["panels"] == 1 and first["calls"] == len(panel["seats"])
    assert (first["verdicts"], first["model_health"], first["health_events"]) == (1, 1, 1)
    assert set(copied(capsys, pg_url, f"sqlite:///{path}").values()) == {0}  # nothing doubled
    assert on_sqlite(path, HEALTH) == on_postgres(pg_url, HEALTH)
    assert on_sqlite(path, EVENTS) == on_postgres(pg_url, EVENTS)

    back = make_gateway(raw, store=path)
    assert back.http.get(f"/bench/calls/{call}").json()["verdict"]["useful"] is True
    assert skipped_alpha(back.ask("bench/duo")[0])["why"].startswith("retired: gone: ")
    assert len(sim.log(served("alpha"))) == 1


def test_a_round_trip_keeps_every_health_row_and_event(make_gateway, sim, pg_url, tmp_path, capsys):
    path = tmp_path / "there.db"
    raw = duo_raw(sim.url)
    old = make_gateway(raw, store=path)
    sim.set(served("alpha"), **answers(410, "Gone."))
    sim.set(served("gamma"), **answers(401, "Unauthorized"))
    old.ask("bench/duo")
    old.http.post("/bench/models/delta/retire", json={"why": "withdrawn upstream"})
    old.close()
    copied(capsys, f"sqlite:///{path}", pg_url)
    again = tmp_path / "again.db"
    copied(capsys, pg_url, f"sqlite:///{again}")
    assert on_sqlite(again, HEALTH) == on_sqlite(path, HEALTH)
    assert len(on_sqlite(path, HEALTH)) == 3
    assert on_sqlite(again, EVENTS) == on_sqlite(path, EVENTS)

"""Every seat on the record, verdicts with history, and records that survive a restart."""

from __future__ import annotations

import sqlite3
import threading
import time

from tests.helpers.bench import served


def db_rows(path, sql, *args):
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(sql, args)]


def test_every_seat_and_the_panel_are_recorded(gateway, sim, tmp_path):
    completion, _ = gateway.ask("bench/trio", content="Check the retry loop.")
    bench = completion.model_extra["bench"]
    panel = gateway.http.get(f"/bench/panels/{bench['panel']}").json()
    assert panel["requested_model"] == "bench/trio"
    assert panel["collection"] == "trio" and panel["shape"] == "general"
    assert panel["shape_by"] == "default" and panel["key_name"] == "local"
    assert panel["prompt"] == "Check the retry loop."
    recorded = {s["id"]: s for s in panel["seats"]}
    assert set(recorded) == {s["call"] for s in bench["seats"]}
    for seat in bench["seats"]:
        row = recorded[seat["call"]]
        assert row["alias"] == seat["alias"] and row["status"] == "ok"
        assert row["answer"] == seat["answer"]
        assert row["model"].startswith("openai/sim-")
        assert row["tokens_out"] > 0 and row["seconds"] >= 0
        assert row["connection"] == seat["connection"]


def test_a_seat_is_recorded_the_moment_it_finishes(gateway, sim, tmp_path):
    sim.set(served("alpha"), latency_s=0.05)
    for alias in ("gamma", "delta", "beta", "epsilon", "zeta"):
        sim.set(served(alias), latency_s=2.0)
    db = tmp_path / "records.db"
    done = threading.Event()
    thread = threading.Thread(target=lambda: (gateway.ask("bench/trio"), done.set()))
    thread.start()
    deadline = time.monotonic() + 10
    rows = []
    while not rows and time.monotonic() < deadline:
        rows = db_rows(db, "SELECT * FROM calls WHERE alias = 'alpha'")
        time.sleep(0.02)
    slow_still_running = [
        r for r in sim.log() if r["model"] != served("alpha") and r["ended"] is None
    ]
    thread.join()
    assert rows and rows[0]["status"] == "ok"
    assert slow_still_running, "alpha's record appeared only after the slow seats ended"
    assert done.is_set()


def test_verdicts_record_replace_and_keep_history(gateway, tmp_path):
    completion, _ = gateway.ask("bench/trio")
    call = completion.model_extra["bench"]["seats"][0]["call"]

    first = gateway.http.post("/bench/verdict", json={"call": call, "useful": True, "note": "good"})
    assert first.status_code == 200 and first.json() == {"call": call, "recorded": True}
    again = gateway.http.post("/bench/verdict", json={"call": call, "useful": True, "note": "good"})
    assert again.json() == {"call": call, "recorded": False}
    changed = gateway.http.post(
        "/bench/verdict",
        json={"call": call, "useful": False, "real": ["claim a"], "false": ["claim b"]},
    )
    assert changed.json() == {"call": call, "recorded": True}

    record = gateway.http.get(f"/bench/calls/{call}").json()
    assert record["verdict"]["useful"] is False
    assert record["verdict"]["real"] == ["claim a"] and record["verdict"]["false"] == ["claim b"]
    history = db_rows(
        tmp_path / "records.db", "SELECT useful FROM verdicts WHERE call_id = ?", call
    )
    assert [h["useful"] for h in history] == [1, 0]

    alpha = next(
        m for m in gateway.http.get("/bench/models").json()["models"] if m["alias"] == "alpha"
    )
    assert (alpha["useful"], alpha["judged"]) == (0, 1)


def test_a_verdict_on_an_unknown_call_is_404_and_malformed_is_400(gateway):
    missing = gateway.http.post("/bench/verdict", json={"call": "p0.member1", "useful": True})
    assert missing.status_code == 404 and "p0.member1" in missing.json()["error"]["message"]
    for body in (
        b"not json",
        b"[]",
        b'{"useful": true}',
        b'{"call": "p0.member1"}',
        b'{"call": "p0.member1", "useful": "yes"}',
        b'{"call": "p0.member1", "useful": true, "real": "x"}',
        b'{"call": "p0.member1", "useful": true, "extra": 1}',
    ):
        response = gateway.http.post("/bench/verdict", content=body)
        assert response.status_code == 400, body
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_unknown_panel_and_call_are_404(gateway):
    for path in ("/bench/panels/pnope", "/bench/calls/pnope.member1"):
        response = gateway.http.get(path)
        assert response.status_code == 404
        assert response.json()["error"]["type"] == "not_found_error"


def test_records_and_evidence_survive_a_restart(make_gateway, sim, tmp_path):
    store = tmp_path / "kept.db"
    first = make_gateway(store=store)
    completion, _ = first.ask("bench/trio")
    bench = completion.model_extra["bench"]
    call = bench["seats"][0]["call"]
    first.http.post("/bench/verdict", json={"call": call, "useful": True})
    first.close()

    second = make_gateway(store=store)
    panel = second.http.get(f"/bench/panels/{bench['panel']}").json()
    assert len(panel["seats"]) == 5
    assert second.http.get(f"/bench/calls/{call}").json()["verdict"]["useful"] is True
    same = second.http.post("/bench/verdict", json={"call": call, "useful": True})
    assert same.json()["recorded"] is False
    alpha = next(
        m for m in second.http.get("/bench/models").json()["models"] if m["alias"] == "alpha"
    )
    assert alpha["seated"] == 1 and alpha["answered"] == 1
    assert (alpha["useful"], alpha["judged"]) == (1, 1)
    assert alpha["last_seated"] is not None


def test_bench_models_shows_every_model_with_its_figures(gateway):
    gateway.ask("bench/trio")
    models = {m["alias"]: m for m in gateway.http.get("/bench/models").json()["models"]}
    assert set(models) == {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
    expected = {
        "alias",
        "connection",
        "role",
        "family",
        "seated",
        "answered",
        "useful",
        "judged",
        "last_seated",
        "cooling_until",
        "cooling_why",
    }
    assert expected <= set(models["alpha"])
    assert models["alpha"]["seated"] == 1 and models["gamma"]["role"] == "code"
    assert models["alpha"]["family"] == "simalpha"


def test_the_store_uses_wal_and_a_migrations_table(gateway, tmp_path):
    db = tmp_path / "records.db"
    assert db_rows(db, "PRAGMA journal_mode")[0]["journal_mode"] == "wal"
    names = [r["name"] for r in db_rows(db, "SELECT name FROM migrations")]
    assert names == [
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


def test_bench_models_gives_the_interval_routing_ranks_by_beside_the_verdicts_it_rests_on(
    gateway,
):
    def alpha() -> dict:
        models = gateway.http.get("/bench/models").json()["models"]
        return next(m for m in models if m["alias"] == "alpha")

    assert alpha()["useful_interval"] == [0.0, 1.0]  # nothing known yet
    calls = [gateway.ask("bench/solo", f"q{i}")[0].bench["seats"][0]["call"] for i in range(4)]
    widths = []
    for call, useful in zip(calls, (True, True, True, False), strict=True):
        assert gateway.http.post("/bench/verdict", json={"call": call, "useful": useful}).json()
        low, high = alpha()["useful_interval"]
        widths.append(high - low)
    row = alpha()
    assert (row["useful"], row["judged"], row["blind_useful"], row["blind_judged"]) == (3, 4, 0, 0)
    low, high = row["useful_interval"]
    assert 0 < low < 0.75 < high < 1
    ranked_by = gateway.runtime.figures.evidence({}, "design").of("alpha").bounds_on("design")
    assert row["useful_interval"] == list(ranked_by)  # solo's shape: every verdict is on it
    assert widths[0] > widths[1] > widths[2]  # surer with each verdict that agrees

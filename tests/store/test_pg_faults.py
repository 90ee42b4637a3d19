"""A gateway on PostgreSQL while PostgreSQL is shut down and started again (a throwaway server of
the test's own, tests/helpers/pg.py): panels are still answered through the official SDKs, every
seat row waits on local disk and is written once PostgreSQL is back, even across a restart of the
gateway; `/healthz` says `degraded` meanwhile; reads are a 503 in the caller's format; past the
spill's bound new panels are refused, and no row is dropped.

No sleeps with margins: each test waits for a state (`/healthz` ok again), never for a time.
"""

from __future__ import annotations

import asyncio
import json
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anthropic
import openai
import psycopg
import pytest
import yaml

from gateway.board import Board
from gateway.cli.main import main
from gateway.health import Health
from gateway.store.postgres import PostgresStore
from gateway.store.spill import Spill
from tests.helpers.bench import bench_raw
from tests.helpers.records import call, panel
from tests.helpers.waiting import health, wait_for


def recorded(url: str) -> tuple[set[str], list[str]]:
    """(panel ids, call ids) in PostgreSQL; call ids as a list, so a duplicate would show."""
    with psycopg.connect(url) as db:
        panels = {r[0] for r in db.execute("SELECT id FROM panels")}
        calls = [r[0] for r in db.execute("SELECT id FROM calls")]
    return panels, calls


def seats_of(completions: list) -> list[str]:
    return [s["call"] for c in completions for s in c.model_extra["bench"]["seats"]]


def spill_files(gw) -> list[Path]:
    return sorted(Path(gw.config.spill_dir).glob("rows-*.jsonl"))


def lines(files: list[Path]) -> int:
    return sum(len(f.read_bytes().splitlines()) for f in files)


def test_panels_answered_while_postgresql_is_down_are_all_recorded_once_it_is_back(
    make_gateway, own_pg_server
):
    url = own_pg_server.new_database()
    gw = make_gateway(store=url)
    answered = [gw.ask(content="before")[0]]
    assert health(gw) == {"status": "ok"}

    with ThreadPoolExecutor(4) as pool:  # shut down while panels are being answered
        running = [pool.submit(gw.ask, content=f"during {i}") for i in range(8)]
        own_pg_server.down()
        answered += [future.result()[0] for future in running]
        later = list(pool.map(lambda i: gw.ask(content=f"after {i}")[0], range(4)))
    answered += later
    assert all(s["status"] == "ok" for c in answered for s in c.model_extra["bench"]["seats"])
    state = health(gw)
    assert state["status"] == "degraded" and "PostgreSQL unreachable" in state["degraded"]["store"]
    (file,) = spill_files(gw)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert lines([file]) >= len(later) + len(seats_of(later))  # each panel and each seat

    panel = later[0].model_extra["bench"]["panel"]
    read = gw.http.get(f"/bench/panels/{panel}")
    assert read.status_code == 503 and read.headers["retry-after"] == "5"
    assert read.json()["error"]["code"] == "records_unavailable"
    verdict = {"call": seats_of(answered[:1])[0], "useful": True}
    assert gw.http.post("/bench/verdict", json=verdict).status_code == 503

    own_pg_server.up()
    wait_for("the store to recover", lambda: health(gw) == {"status": "ok"})
    panels, calls = recorded(url)
    assert panels == {c.model_extra["bench"]["panel"] for c in answered}
    assert sorted(calls) == sorted(seats_of(answered))  # every seat, once
    assert file.stat().st_size == 0  # written, then truncated
    found = gw.http.get(f"/bench/panels/{panel}").json()
    assert {s["id"] for s in found["seats"]} == set(seats_of(later[:1]))
    assert gw.http.post("/bench/verdict", json=verdict).json()["recorded"] is True
    gw.ask(content="after")  # straight in again
    assert len(recorded(url)[0]) == len(answered) + 1


# uvicorn ends its thread with SystemExit when the app fails to start, as it ends a process
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_gateway_restarted_while_postgresql_is_down_keeps_its_rows_and_writes_them_at_start(
    make_gateway, own_pg_server
):
    url = own_pg_server.new_database()
    first = make_gateway(store=url)
    own_pg_server.down()
    answered = [first.ask(content=f"q{i}")[0] for i in range(3)]
    first.close()
    (file,) = spill_files(first)
    kept = file.read_bytes()
    assert len(kept.splitlines()) == 3 + len(seats_of(answered))

    # A gateway starting afresh cannot seat without the standings it reads from the records:
    # it refuses to start, and leaves the rows where they are.
    with pytest.raises(RuntimeError, match="did not start"):
        make_gateway(store=url)
    assert spill_files(first) == [file] and file.read_bytes() == kept

    own_pg_server.up()
    second = make_gateway(store=url)  # adopts the file and writes it before serving
    panels, calls = recorded(url)
    assert panels == {c.model_extra["bench"]["panel"] for c in answered}
    assert sorted(calls) == sorted(seats_of(answered))
    assert spill_files(second) == [] and health(second) == {"status": "ok"}

    # Written twice (a replica stopped between PostgreSQL's commit and the truncate): the rows
    # already there are skipped, nothing doubles and nothing fails.
    (Path(second.config.spill_dir) / "rows-1-gone.jsonl").write_bytes(kept)
    second.close()
    third = make_gateway(store=url)
    assert spill_files(third) == [] and health(third) == {"status": "ok"}
    assert sorted(recorded(url)[1]) == sorted(seats_of(answered))


def test_a_worker_replaced_while_postgresql_is_down_serves_and_writes_the_dead_ones_rows(
    make_gateway, own_pg_server, tmp_path
):
    """Two gateways on one board file are two workers of one `serve`: the second, started
    after the first is gone, finds the live figures on the board and needs no read to start."""
    board = tmp_path / "board"
    Board.create(board)
    url = own_pg_server.new_database()
    first = make_gateway(store=url, board=board)
    own_pg_server.down()
    answered = [first.ask(content="to the first")[0]]
    first.close()

    second = make_gateway(store=url, board=board)  # adopts the first one's file, and serves
    answered.append(second.ask(content="to the second")[0])
    assert health(second)["status"] == "degraded"
    own_pg_server.up()
    wait_for("the store to recover", lambda: health(second) == {"status": "ok"})
    panels, calls = recorded(url)
    assert panels == {c.model_extra["bench"]["panel"] for c in answered}
    assert sorted(calls) == sorted(seats_of(answered))
    assert spill_files(second)[0].stat().st_size == 0 and len(spill_files(second)) == 1


def test_past_the_spill_bound_new_panels_are_refused_in_the_callers_format_and_none_dropped(
    make_gateway, own_pg_server, sim
):
    url = own_pg_server.new_database()
    gw = make_gateway(store=url, spill_max_mb=0.001)  # 1,000 bytes: one panel's rows pass it
    own_pg_server.down()
    kept, _ = gw.ask(content="first")
    calls_upstream = len(sim.log())

    with pytest.raises(openai.APIStatusError) as refused:
        gw.ask(content="second")
    assert refused.value.status_code == 503
    assert refused.value.body["code"] == "records_backlogged"
    assert refused.value.response.headers["retry-after"] == "5"
    claude = anthropic.Anthropic(base_url=gw.url, api_key="local", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as refused_too:
        claude.messages.create(
            model="bench/trio", max_tokens=64, messages=[{"role": "user", "content": "third"}]
        )
    claude.close()
    assert refused_too.value.status_code == 503
    assert refused_too.value.body["error"]["type"] == "overloaded_error"
    assert len(sim.log()) == calls_upstream  # nobody seated, nothing called
    assert "wait on local disk" in refused.value.message

    own_pg_server.up()
    wait_for("the store to recover", lambda: health(gw) == {"status": "ok"})
    panels, calls = recorded(url)
    assert panels == {kept.model_extra["bench"]["panel"]}
    assert sorted(calls) == sorted(seats_of([kept]))
    again, _ = gw.ask(content="second, again")
    assert again.model_extra["bench"]["panel"] in recorded(url)[0]


def test_a_keyed_gateway_answers_keys_it_has_seen_while_postgresql_is_down(
    make_gateway, own_pg_server, sim, tmp_path, capsys
):
    url = own_pg_server.new_database()
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = url
    config = tmp_path / "keyed.yaml"
    config.write_text(yaml.safe_dump(raw))
    capsys.readouterr()
    keys = []
    for name in ("seen", "unseen"):
        assert main(["keys", "create", name, "--config", str(config)]) == 0
        keys.append(capsys.readouterr().out.strip())
    seen, unseen = keys
    gw = make_gateway(raw, store=url)

    def ask(key: str):
        client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0, timeout=30)
        try:
            return client.chat.completions.create(
                model="bench/trio", messages=[{"role": "user", "content": "hi"}]
            )
        finally:
            client.close()

    ask(seen)
    own_pg_server.down()
    answered = ask(seen)  # a key seen here is taken as last seen: nobody can revoke it now
    with pytest.raises(openai.APIStatusError) as refused:
        ask(unseen)  # never seen: it cannot be checked, so it is not let in
    assert refused.value.status_code == 503
    own_pg_server.up()
    wait_for("the store to recover", lambda: health(gw) == {"status": "ok"})
    with psycopg.connect(url) as db:
        owner = db.execute(
            "SELECT key_name FROM panels WHERE id = %s", (answered.model_extra["bench"]["panel"],)
        ).fetchone()
    assert owner == ("seen",)


def test_a_seat_whose_panel_never_comes_waits_its_patience_then_is_set_aside_not_dropped(
    pg_url, tmp_path
):
    """Its panel was refused as a bad row, say: the seat waits a few tries (its panel may be on
    another worker's disk), then goes to `rejected.jsonl`, and the rows behind it go in."""
    folder = tmp_path / "spill"
    health = Health()
    store = PostgresStore(pg_url, spill=Spill(folder, 10_000_000), health=health, patience=3)

    async def scenario() -> None:
        await store.open()
        try:
            await store.add_panel(panel(1))
            await store.add_call(call("p-never", "member1"))  # kept on disk, not an error
            assert health.faults["store"].startswith("seat rows wait for their panel")
            await store.add_call(call("p1", "member1"))  # behind it, in order
            while "store" in health.faults:  # the retry task, at its own pace
                await asyncio.sleep(0.05)
        finally:
            await store.close()

    asyncio.run(asyncio.wait_for(scenario(), timeout=120))
    with psycopg.connect(pg_url) as db:
        assert [r[0] for r in db.execute("SELECT id FROM calls")] == ["p1.member1"]
    (rejected,) = [
        json.loads(line) for line in (folder / "rejected.jsonl").read_text().splitlines()
    ]
    assert rejected["row"]["id"] == "p-never.member1" and "ForeignKeyViolation" in rejected["why"]
    assert not list(folder.glob("rows-*.jsonl"))  # written back in full: the empty file went

"""A gateway on SQLite while its disk fills up (a real tmpfs, mounted small) and while its store
file is deleted or replaced under it: panels are still answered through the official SDK (or,
when nothing can keep their rows, refused 503 before any call), never a 500 or a reset;
`/healthz` says `degraded` and why, then `ok` again by itself; every answer is in the store
file once it can write, and still there after a restart.

No sleeps with margins: each test waits for a state, never for a time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.helpers.bench import quiet_raw
from tests.helpers.waiting import health, wait_for

BIG = "a question with a long preamble. " * 3000  # ~100 KB: a panel row needs new pages


def recorded(path: Path) -> tuple[set[str], set[str]]:
    """(panel ids, call ids) in the SQLite file at *path*."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        panels = {r[0] for r in db.execute("SELECT id FROM panels")}
        calls = {r[0] for r in db.execute("SELECT id FROM calls")}
    return panels, calls


def answered(completions: list) -> tuple[set[str], set[str]]:
    bench = [c.model_extra["bench"] for c in completions]
    return {b["panel"] for b in bench}, {s["call"] for b in bench for s in b["seats"]}


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A real filesystem of 8 MB (tmpfs), to fill up."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    where = tmp_path / "small"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Fill *disk* to the last byte; the filler, to unlink when it is time to free it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def gateway_on(make_gateway, sim, store: Path, spill: Path):
    return make_gateway(quiet_raw(sim.url, spill_dir=str(spill)), store=store)


def test_a_full_disk_under_the_store_loses_no_answer_and_healthz_says_why(
    make_gateway, sim, small_disk, tmp_path
):
    store = small_disk / "records.db"
    gw = gateway_on(make_gateway, sim, store, tmp_path / "spill")  # the spill on another disk
    done = [gw.ask(content="before")[0]]
    filler = fill(small_disk)

    during = [gw.ask(content=f"{BIG} {i}")[0] for i in range(3)]  # 200s, every seat ok
    assert all(s["status"] == "ok" for c in during for s in c.model_extra["bench"]["seats"])
    state = health(gw)
    assert state["status"] == "degraded", state
    assert "database or disk is full" in state["degraded"]["store"]
    assert "kept in the spill" in state["degraded"]["store"]
    assert not answered(during)[0] & recorded(store)[0]  # not in the file: in the spill

    filler.unlink()
    wait_for("the store to write again", lambda: health(gw) == {"status": "ok"})
    panels, calls = answered(done + during)
    assert recorded(store) == (panels, calls)
    assert all(f.stat().st_size == 0 for f in (tmp_path / "spill").glob("rows-*.jsonl"))
    call = during[0].model_extra["bench"]["seats"][0]["call"]
    assert gw.http.get(f"/bench/calls/{call}").json()["status"] == "ok"


def test_when_nothing_can_keep_its_rows_a_panel_is_refused_503_before_any_call(
    make_gateway, sim, small_disk
):
    store = small_disk / "records.db"
    gw = gateway_on(make_gateway, sim, store, small_disk / "spill")  # the spill on the same disk
    gw.ask(content="before")
    calls_before = len(sim.log())
    filler = fill(small_disk)

    with pytest.raises(openai.APIStatusError) as refused:
        gw.ask(content=BIG)
    assert refused.value.status_code == 503
    assert refused.value.response.headers["Retry-After"] == "5"
    error = refused.value.body
    assert error["code"] in ("records_unavailable", "records_backlogged"), error
    assert len(sim.log()) == calls_before, "a refused panel called an upstream"
    state = health(gw)
    assert state["status"] == "degraded" and "full" in state["degraded"]["store"]

    filler.unlink()
    wait_for("the store to write again", lambda: health(gw) == {"status": "ok"})
    completion, _ = gw.ask(content="after")
    assert completion.model_extra["bench"]["panel"] in recorded(store)[0]


def test_the_store_file_deleted_while_serving_is_put_back_and_nothing_is_forgotten(
    make_gateway, sim, tmp_path, caplog
):
    caplog.set_level(logging.WARNING)
    store = tmp_path / "records.db"
    gw = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    done = [gw.ask(content="before")[0]]
    verdict = done[0].model_extra["bench"]["seats"][0]["call"]
    assert gw.http.post("/bench/verdict", json={"call": verdict, "useful": True}).status_code == 200

    store.unlink()  # the attack: the file gone from under the open connection
    done.append(gw.ask(content="right after")[0])  # before any watch could notice
    wait_for("the file to be put back", lambda: store.exists() and health(gw)["status"] == "ok")
    assert "was deleted while serving: put back" in caplog.text
    done.append(gw.ask(content="after")[0])
    gw.close()

    again = make_gateway(quiet_raw(sim.url, spill_dir=str(tmp_path / "spill")), store=store)
    assert recorded(store) == answered(done)  # a restart forgets nothing
    assert again.http.get(f"/bench/calls/{verdict}").json()["verdict"]["useful"] is True


def test_the_store_file_replaced_with_random_bytes_is_set_aside_and_the_records_put_back(
    make_gateway, sim, tmp_path, caplog
):
    caplog.set_level(logging.WARNING)
    store = tmp_path / "records.db"
    gw = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    done = [gw.ask(content="before")[0]]

    stranger = tmp_path / "random"
    stranger.write_bytes(os.urandom(64 * 1024))
    os.replace(stranger, store)  # the attack: another file renamed over the store
    done.append(gw.ask(content="right after")[0])
    wait_for("the file to be put back", lambda: "put back" in caplog.text)
    wait_for("the store to write again", lambda: health(gw) == {"status": "ok"})
    assert "was replaced by another file while serving" in caplog.text
    (aside,) = tmp_path.glob("records.db.replaced-*")
    assert len(aside.read_bytes()) == 64 * 1024  # the stranger kept as it was, not destroyed
    done.append(gw.ask(content="after")[0])
    gw.close()

    make_gateway(quiet_raw(sim.url, spill_dir=str(tmp_path / "spill")), store=store)
    assert recorded(store) == answered(done)


def test_two_workers_on_one_store_file_deleted_while_serving_both_write_to_what_is_put_back(
    make_gateway, sim, tmp_path, caplog
):
    """Two gateways on one file, as `serve --workers 2` runs: one puts the file back once the
    other has let go of the old one, the other reopens it; neither's answers are forgotten."""
    caplog.set_level(logging.WARNING)
    store = tmp_path / "records.db"
    one = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    two = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    done = [one.ask(content="one before")[0], two.ask(content="two before")[0]]

    store.unlink()
    done += [one.ask(content="one right after")[0], two.ask(content="two right after")[0]]
    wait_for("the file to be put back", lambda: "put back" in caplog.text)
    wait_for("both to write again", lambda: health(one) == health(two) == {"status": "ok"})
    done += [one.ask(content="one after")[0], two.ask(content="two after")[0]]
    assert recorded(store) == answered(done)
    one.close()
    two.close()

    make_gateway(quiet_raw(sim.url, spill_dir=str(tmp_path / "spill")), store=store)
    assert recorded(store) == answered(done)
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("store_was", ["just made", "reopened"])
def test_garbage_written_over_the_live_store_file_is_noticed_and_every_record_kept(
    make_gateway, sim, tmp_path, caplog, store_was
):
    """`dd if=/dev/urandom of=records.db bs=8k count=1 conv=notrunc` while serving: the file keeps
    its identity, so only reading it tells. `/healthz` names the damage, panels are still
    answered, the records are put back from the open connection, and a restart finds them all.
    A store just made has its first pages in the WAL too; one reopened after a restart (its
    WAL written into the file, as a checkpoint leaves it) has them only in the file, where the
    garbage is: they are read with the first page as the gateway last saw it."""
    caplog.set_level(logging.WARNING)
    store = tmp_path / "records.db"
    gw = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    done = [gw.ask(content="before")[0]]
    verdict = done[0].model_extra["bench"]["seats"][0]["call"]
    assert gw.http.post("/bench/verdict", json={"call": verdict, "useful": True}).status_code == 200
    retired = gw.http.get("/bench/models").json()["models"][-1]["alias"]  # a health row, kept too
    retiring = gw.http.post(f"/bench/models/{retired}/retire", json={"why": "withdrawn"})
    assert retiring.status_code == 200, retiring.text
    if store_was == "reopened":
        gw.close()
        gw = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    identity = (store.stat().st_dev, store.stat().st_ino)

    subprocess.run(  # the attack: garbage over the first 8 KB, in place
        ["dd", "if=/dev/urandom", f"of={store}", "bs=8k", "count=1", "conv=notrunc"],
        check=True,
        capture_output=True,
    )
    assert (store.stat().st_dev, store.stat().st_ino) == identity
    done.append(gw.ask(content="right after")[0])  # answered, whatever the file holds
    wait_for(
        "/healthz to name the damage",
        lambda: "overwritten while serving" in health(gw).get("degraded", {}).get("store", ""),
    )
    wait_for("the file to be put back", lambda: "put back" in caplog.text)
    wait_for("the store to write again", lambda: health(gw) == {"status": "ok"})
    (aside,) = tmp_path.glob("records.db.damaged-*")  # the damaged file kept, not destroyed
    done.append(gw.ask(content="after")[0])
    assert recorded(store) == answered(done)
    gw.close()

    again = make_gateway(quiet_raw(sim.url, spill_dir=str(tmp_path / "spill")), store=store)
    assert recorded(store) == answered(done)  # the next start works and forgets nothing
    assert again.http.get(f"/bench/calls/{verdict}").json()["verdict"]["useful"] is True
    health_now = {m["alias"]: m for m in again.http.get("/bench/health").json()["models"]}
    assert (health_now[retired]["health"], health_now[retired]["why"]) == ("retired", "withdrawn")
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM health_events").fetchone()[0] >= 1


def test_two_workers_on_one_store_file_overwritten_in_place_both_write_to_what_is_put_back(
    make_gateway, sim, tmp_path, caplog
):
    """The same garbage under `serve --workers 2`: one worker copies the records out once the
    other has let go of the damaged file, the other reopens the copy; nothing is forgotten."""
    caplog.set_level(logging.WARNING)
    store = tmp_path / "records.db"
    one = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    two = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    done = [one.ask(content="one before")[0], two.ask(content="two before")[0]]

    with open(store, "r+b") as file:  # as dd conv=notrunc does
        file.write(os.urandom(8192))
    done += [one.ask(content="one right after")[0], two.ask(content="two right after")[0]]
    wait_for("the file to be put back", lambda: "put back" in caplog.text)
    wait_for("both to write again", lambda: health(one) == health(two) == {"status": "ok"})
    done += [one.ask(content="one after")[0], two.ask(content="two after")[0]]
    assert recorded(store) == answered(done)
    one.close()
    two.close()

    make_gateway(quiet_raw(sim.url, spill_dir=str(tmp_path / "spill")), store=store)
    assert recorded(store) == answered(done)
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_store_file_overwritten_past_what_can_be_read_is_left_for_repair_not_replaced(
    make_gateway, sim, tmp_path, caplog
):
    """Garbage over the whole file of a reopened store (its WAL in the file): no record can be
    read back, so nothing replaces the file (an empty store would): it stays as it is for
    repair, `/healthz` says so, and panels are still answered, their rows in the spill."""
    caplog.set_level(logging.WARNING)
    store = tmp_path / "records.db"
    first = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    first.ask(content="before")
    first.close()
    gw = gateway_on(make_gateway, sim, store, tmp_path / "spill")
    identity = (store.stat().st_dev, store.stat().st_ino)

    with open(store, "r+b") as file:  # as dd conv=notrunc does, over every page
        file.write(os.urandom(store.stat().st_size))
    wait_for(
        "/healthz to say the records cannot all be read",
        lambda: "not every record can be read" in health(gw).get("degraded", {}).get("store", ""),
    )
    completion, _ = gw.ask(content="while it waits for repair")
    assert all(s["status"] == "ok" for s in completion.model_extra["bench"]["seats"])
    assert (store.stat().st_dev, store.stat().st_ino) == identity  # the same file, not replaced
    assert not list(tmp_path.glob("records.db.damaged-*"))
    assert "left as it is, for repair" in caplog.text
    spilled = b"".join(f.read_bytes() for f in (tmp_path / "spill").glob("rows-*.jsonl"))
    assert completion.model_extra["bench"]["panel"].encode() in spilled

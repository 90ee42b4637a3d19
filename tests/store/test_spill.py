"""The spill file alone (gateway/store/spill.py): rows kept in order on disk, written back and
truncated, adopted from a process that is gone and never from one alive, bounded but never
dropping a row. A writer that records what it is given stands in for PostgreSQL here; the
gateway on a real PostgreSQL stopped and started is tests/store/test_pg_faults.py."""

from __future__ import annotations

import asyncio
import logging
import stat
from pathlib import Path

from gateway.store.spill import Rows, Spill


def rows(*ids: str, table: str = "calls") -> Rows:
    return [(table, {"id": i, "panel_id": i.split(".")[0], "answer": f"answer {i}"}) for i in ids]


class Writer:
    """Takes rows as PostgreSQL would; `refuse` names ids it cannot take yet (a seat whose panel
    is not written), `limit` how many it takes before it is unreachable."""

    def __init__(self, refuse: set[str] | None = None, limit: int | None = None) -> None:
        self.written: list[str] = []
        self.refuse = refuse or set()
        self.limit = limit

    async def __call__(self, given: Rows) -> int:
        for count, (_, row) in enumerate(given):
            if row["id"] in self.refuse or (self.limit is not None and self.limit <= 0):
                return count
            self.written.append(row["id"])
            self.refuse.discard(row["id"] + ".seat")  # its seat may follow now
            if self.limit is not None:
                self.limit -= 1
        return len(given)


def files(folder: Path) -> list[Path]:
    return sorted(folder.glob("rows-*.jsonl"))


def test_rows_are_kept_on_disk_in_order_then_written_back_and_the_file_truncated(tmp_path):
    folder = tmp_path / "spill"
    spill = Spill(folder, max_bytes=10_000_000)
    emptied: list[bool] = []

    async def run() -> bool:
        await spill.append(rows("p1", table="panels") + rows("p1.a", "p1.b"))
        await spill.append(rows("p2", table="panels"))
        (file,) = files(folder)
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert len(file.read_bytes().splitlines()) == 4 and spill.rows == 4
        return await spill.replay(writer, lambda: emptied.append(True))

    writer = Writer()
    assert asyncio.run(run()) is True
    assert writer.written == ["p1", "p1.a", "p1.b", "p2"] and emptied == [True]
    (file,) = files(folder)
    assert file.stat().st_size == 0 and (spill.rows, spill.bytes) == (0, 0)
    spill.close()
    assert files(folder) == []  # an empty file of its own goes with the process


def test_a_writer_stopping_short_leaves_the_rest_for_the_next_try_and_nothing_twice(tmp_path):
    spill = Spill(tmp_path, max_bytes=10_000_000)
    writer = Writer(limit=2)

    async def run() -> tuple[bool, bool]:
        await spill.append(rows("a", "b", "c", "d"))
        first = await spill.replay(writer, lambda: None)
        writer.limit = None
        return first, await spill.replay(writer, lambda: None)

    assert asyncio.run(run()) == (False, True)
    assert writer.written == ["a", "b", "c", "d"]
    spill.close()


def test_rows_appended_while_others_are_written_back_are_written_before_it_reports_empty(
    tmp_path,
):
    spill = Spill(tmp_path, max_bytes=10_000_000)
    written: list[str] = []

    async def slow_writer(given: Rows) -> int:
        if not written:  # a panel's seats arrive while the first rows are in flight
            await spill.append(rows("late"))
        written.extend(row["id"] for _, row in given)
        return len(given)

    async def run() -> bool:
        await spill.append(rows("early"))
        return await spill.replay(slow_writer, lambda: written.append("<empty>"))

    assert asyncio.run(run()) is True
    assert written == ["early", "late", "<empty>"]
    spill.close()


def test_a_file_is_adopted_only_once_the_process_that_wrote_it_is_gone(tmp_path):
    alive = Spill(tmp_path, max_bytes=10_000_000)
    asyncio.run(alive.append(rows("kept.1", "kept.2")))
    other = Spill(tmp_path, max_bytes=10_000_000)
    assert other.adopt() == 0  # its lock is held: the writer is alive
    other.close()
    alive.close()  # gone with rows left: they stay for the next start
    assert len(files(tmp_path)) == 1

    heir = Spill(tmp_path, max_bytes=10_000_000)
    assert heir.adopt() == 2 and heir.rows == 2
    assert Spill(tmp_path, max_bytes=10_000_000).adopt() == 0  # one heir only
    writer = Writer()
    assert asyncio.run(heir.replay(writer, lambda: None)) is True
    assert writer.written == ["kept.1", "kept.2"] and files(tmp_path) == []
    heir.close()


def test_a_seat_waiting_for_its_panel_in_another_file_does_not_hold_that_file_up(tmp_path):
    """Worker A wrote panel p, worker B its seat; both are gone, and B's file sorts first."""
    for name, written in (("rows-1-b", rows("p.seat")), ("rows-2-a", rows("p", table="panels"))):
        spill = Spill(tmp_path, max_bytes=10_000_000)
        asyncio.run(spill.append(written))
        (file,) = [f for f in files(tmp_path) if not f.name.startswith(("rows-1-", "rows-2-"))]
        spill.close()
        file.rename(tmp_path / f"{name}.jsonl")
    heir = Spill(tmp_path, max_bytes=10_000_000)
    assert heir.adopt() == 2
    writer = Writer(refuse={"p.seat"})
    assert asyncio.run(heir.replay(writer, lambda: None)) is True
    assert writer.written == ["p", "p.seat"] and files(tmp_path) == []
    heir.close()


def test_an_unfinished_last_row_is_left_out_and_logged_and_the_rest_written(tmp_path, caplog):
    spill = Spill(tmp_path, max_bytes=10_000_000)
    asyncio.run(spill.append(rows("whole.1", "whole.2")))
    (file,) = files(tmp_path)
    spill.close()
    with file.open("ab") as torn:  # a process stopped while writing its last row
        torn.write(b'{"table": "calls", "row": {"id": "cut')
    heir = Spill(tmp_path, max_bytes=10_000_000)
    assert heir.adopt() == 3
    writer = Writer()
    with caplog.at_level(logging.ERROR, logger="bench.records"):
        assert asyncio.run(heir.replay(writer, lambda: None)) is True
    assert writer.written == ["whole.1", "whole.2"] and heir.rows == 0
    assert any("no whole row" in r.getMessage() for r in caplog.records)
    heir.close()


def test_past_its_bound_the_spill_says_full_and_still_takes_every_row(tmp_path):
    spill = Spill(tmp_path, max_bytes=300)

    async def run() -> list[bool]:
        seen = [spill.full()]
        await spill.append(rows("a", "b", "c"))  # about 210 bytes
        seen.append(spill.full())
        await spill.append(rows("d", "e"))  # a panel admitted before the bound: still kept
        seen.append(spill.full())
        return seen

    assert asyncio.run(run()) == [False, False, True]
    assert spill.rows == 5 and spill.bytes > 300
    writer = Writer()
    assert asyncio.run(spill.replay(writer, lambda: None)) is True
    assert writer.written == ["a", "b", "c", "d", "e"] and not spill.full()
    spill.close()

"""Two workers on one SQLite file keep each other's locks: what one worker's store does on its
own (opening, the damage watch reading the file's header, its deep check) never drops the locks
its connections hold, so another worker's connection closing (a reload replacing a worker)
never takes itself for the file's last one and deletes the `-wal` still being written.

The other worker is a real second process; the first is a real store, its watch called as the
detour calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

from gateway.store.sqlite import SqliteStore
from tests.helpers.records import call, panel

# A second worker: opens the file, reads and writes a row, closes (as a replaced worker does).
OTHER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA busy_timeout=10000")
db.execute("SELECT COUNT(*) FROM panels").fetchone()
db.execute("UPDATE migrations SET applied = applied WHERE rowid = 1")
db.close()
"""


def other_worker_comes_and_goes(path: Path) -> None:
    subprocess.run([sys.executable, "-c", OTHER, str(path)], check=True, timeout=60)


def test_the_damage_watch_keeps_the_locks_another_worker_closing_relies_on(tmp_path):
    path = tmp_path / "records.db"
    wal = path.with_name(path.name + "-wal")

    async def scenario() -> None:
        store = SqliteStore(path)
        await store.open()
        try:
            for n in range(3):
                await store.add_panel(panel(n))
                await store.add_call(call(f"p{n}", "a"))
            assert await store.writer.damaged(False) is None
            assert await store.writer.damaged(True) is None
            other_worker_comes_and_goes(path)
            assert wal.exists(), "another worker's close deleted the -wal this store writes"
            await store.add_panel(panel(3))
            await store.add_call(call("p3", "a"))
            assert await store.writer.damaged(True) is None
        finally:
            await store.close()

    asyncio.run(scenario())
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        panels = {row[0] for row in db.execute("SELECT id FROM panels")}
    assert panels == {"p0", "p1", "p2", "p3"}

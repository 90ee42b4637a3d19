"""Does a big record store slow a panel down? Panel latency with 1,000,000 seats on record
against an empty store.

Why pre-fill the file directly: a million seats through the gateway would take hours and measure
the upstream; what matters is what the store's size does to each later panel (its inserts,
indexes and the start-up read of standings). The schema is the gateway's own, made by starting it
once on an empty file, so the rows land exactly where the gateway would put them.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import sqlite3
import time
from pathlib import Path

import load_client as lc
import targets as t
from context import Ctx
from report import ratios, summary

SEATS = 5
PANEL = lc.chat("bench/five")


_ALIASES = ("m1", "m2", "m3", "m4", "m5")


def _filler(columns: list[tuple], known: dict):
    """Values for one row: known columns from *known*, other NOT NULL ones by declared type, so a
    column added by a later migration does not break the pre-fill."""
    default = {"TEXT": "x", "INTEGER": 0, "REAL": 0.0}
    return [
        known[name] if name in known else (default.get(kind.upper(), "x") if notnull else None)
        for _, name, kind, notnull, _, _ in columns
    ]


def prefill(ctx: Ctx, sim_url: str) -> Path:
    """A store holding ``ctx.record_rows`` seats: schema made by the gateway itself (started once
    on an empty file and stopped), then rows bulk-inserted with sqlite3, 5 seats per panel."""
    store = ctx.work / f"records-{ctx.record_rows}.db"
    if store.exists():
        return store
    config = t.ours_config(ctx.work, sim_url, store, 60)
    proc, _ = t.start_ours(ctx.work, config)
    proc.stop()
    began = time.monotonic()
    db = sqlite3.connect(store)
    db.execute("PRAGMA synchronous=OFF")
    panel_cols = db.execute("PRAGMA table_info(panels)").fetchall()
    call_cols = db.execute("PRAGMA table_info(calls)").fetchall()
    now, span = time.time(), 90 * 86400.0
    answer = "Line 42 shadows `result`; the early return skips the close(). " * 3
    n_panels = ctx.record_rows // SEATS

    def panels():
        for i in range(n_panels):
            pid = f"p{i:012x}"
            created = now - span + span * i / n_panels
            yield _filler(
                panel_cols,
                {
                    "id": pid,
                    "created": created,
                    "requested_model": "bench/five",
                    "collection": "five",
                    "shape": "general",
                    "shape_by": "default",
                    "prompt": "Review: is retrying forever safe?",
                    "key_name": "local",
                    "skipped": "[]",
                    "notes": "[]",
                    "reserves": "[]",
                },
            )

    def calls():
        for i in range(n_panels):
            pid, created = f"p{i:012x}", now - span + span * i / n_panels
            for s, alias in enumerate(_ALIASES, 1):
                yield _filler(
                    call_cols,
                    {
                        "id": f"{pid}.member{s}",
                        "panel_id": pid,
                        "seat": f"member{s}",
                        "alias": alias,
                        "model": f"openai/sim-{alias}",
                        "connection": f"c{alias}",
                        "shape": "general",
                        "status": "ok",
                        "seconds": 0.8,
                        "first_token_s": 0.3,
                        "tokens_in": 12,
                        "tokens_out": 40,
                        "answer": answer,
                        "started": created,
                        "finished": created + 0.8,
                    },
                )

    with db:
        for table, columns, rows in (
            ("panels", panel_cols, panels()),
            ("calls", call_cols, calls()),
        ):
            marks = ", ".join("?" * len(columns))
            names = ", ".join(f'"{c[1]}"' for c in columns)
            db.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
    count = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    ctx.log(
        f"pre-filled {count:,} seats into {store.name} in {time.monotonic() - began:.0f} s "
        f"({store.stat().st_size / 1e6:.0f} MB)"
    )
    return store


def records(ctx: Ctx) -> dict:
    per: dict[str, list] = {
        "empty_ms": [],
        "full_ms": [],
        "full_startup_s": [],
        "empty_startup_s": [],
    }
    with contextlib.ExitStack() as stack:
        sim, sim_url = t.start_sim(ctx.work, 0.0)
        stack.callback(sim.stop)
        full = prefill(ctx, sim_url)
        for run in range(ctx.runs):
            ctx.check_quiet(f"records run {run + 1}")
            for label in ("empty", "full") if run % 2 == 0 else ("full", "empty"):
                store = full if label == "full" else ctx.work / f"store-{secrets.token_hex(4)}.db"
                proc, url = t.start_ours(ctx.work, t.ours_config(ctx.work, sim_url, store, 60))
                with proc:
                    endpoint = url + "/v1/chat/completions"
                    asyncio.run(lc.sequential(endpoint, PANEL, 10, lambda s, b: True))
                    got = asyncio.run(
                        lc.sequential(endpoint, PANEL, ctx.latency_panels, lc.panel_check(SEATS))
                    )
                per[f"{label}_ms"].append(1000 * got.median())
                per[f"{label}_startup_s"].append(proc.ready_s)
                ctx.log(
                    f"records run {run + 1} {label}: median panel {1000 * got.median():.1f} ms,"
                    f" start-up {proc.ready_s:.2f} s, failed {got.failed()}"
                )
    figures = {k: summary(v) for k, v in per.items()}
    figures["ratio"] = ratios(per["full_ms"], per["empty_ms"])
    return {"figures": figures, "options": {"rows": ctx.record_rows, "panels": ctx.latency_panels}}

"""Does the dashboard stay fast on a big record store? Server time of the panels page (`GET /`
and `GET /bench/panels`, first page, a deep page, owed only) with 1,000,000 seats on record.
Budget: 200 ms for the panels page (issue 16).

The store's schema is the gateway's own (its migrations run on an empty file), then 200,000
panels of five seats are bulk-inserted with sqlite3's executemany in about a minute, a fifth of
the older seats judged; the newest panels owe their verdicts, as on a bench in use. The page is
asked in-process through Starlette's TestClient (from a loopback address, so the page is open):
the time includes the client's own overhead, so it is an upper bound on the server's.

    python benchmarks/measure_pages.py [--seats 1000000] [--store PATH] [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from starlette.testclient import TestClient  # noqa: E402

from gateway.app import create_app  # noqa: E402
from gateway.config.settings import parse_config  # noqa: E402
from gateway.store.interface import CALL_FIELDS, PANEL_FIELDS  # noqa: E402
from gateway.store.sqlite import SqliteStore  # noqa: E402

SEATS = 5
ALIASES = ("m1", "m2", "m3", "m4", "m5")
BUDGET_MS = 200.0


def fill(path: Path, seats: int) -> None:
    """The gateway's schema, then *seats* seat rows (SEATS a panel) and verdicts on a fifth."""
    asyncio.run(_migrated(path))
    began = time.monotonic()
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")
    n = seats // SEATS
    now, span = time.time(), 90 * 86400.0
    answer = "Line 42 shadows `result`; the early return skips the close(). " * 3

    def panel(i: int) -> dict:
        return {
            "id": f"p{i:012x}",
            "created": now - span + span * i / n,
            "requested_model": "bench/five",
            "collection": "five",
            "shape": "general",
            "shape_by": "default",
            "prompt": "Review: is retrying forever safe?",
            "key_name": "ann" if i % 10 == 0 else "local",
        }

    def calls():
        for i in range(n):
            p = panel(i)
            for s, alias in enumerate(ALIASES, 1):
                yield [
                    {
                        "id": f"{p['id']}.member{s}",
                        "panel_id": p["id"],
                        "seat": f"member{s}",
                        "alias": alias,
                        "model": f"openai/{alias}",
                        "connection": "c",
                        "shape": "general",
                        "status": "ok" if (i + s) % 13 else "error",
                        "seconds": 0.8,
                        "answer": answer,
                        "started": p["created"],
                        "finished": p["created"] + 0.8,
                    }.get(f)
                    for f in CALL_FIELDS
                ]

    def verdicts():
        for i in range(0, n - 2000, 5):  # a fifth of the panels, none of the newest
            yield (f"p{i:012x}.member1", i % 2, now)

    def insert(table: str, fields: tuple[str, ...], rows) -> None:
        names = ", ".join(f'"{f}"' for f in fields)
        marks = ", ".join("?" * len(fields))
        db.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)

    with db:
        insert("panels", PANEL_FIELDS, ([panel(i).get(f) for f in PANEL_FIELDS] for i in range(n)))
        insert("calls", CALL_FIELDS, calls())
        db.executemany(
            "INSERT INTO verdicts (call_id, useful, created) VALUES (?, ?, ?)", verdicts()
        )
    db.execute("ANALYZE")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    count = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    db.close()
    print(
        f"filled {count:,} seats in {time.monotonic() - began:.0f} s "
        f"({path.stat().st_size / 1e6:.0f} MB)"
    )


def config(path: Path):
    return parse_config(
        {
            "model_list": [
                {
                    "model_name": alias,
                    "litellm_params": {
                        "model": f"openai/{alias}",
                        "api_base": "http://127.0.0.1:9/v1",
                    },
                }
                for alias in ALIASES
            ],
            "collections": {"five": {"members": list(ALIASES)}},
            "store": f"sqlite:///{path}",
        },
        base=path.parent,
    )


class _Never:
    """The way out of a gateway that asks no model."""

    async def call(self, *args, **kwargs):
        raise RuntimeError("the benchmark asks no model")

    async def open_turn(self, *args, **kwargs):
        raise RuntimeError("the benchmark asks no model")


def timed(client: TestClient, url: str, runs: int) -> list[float]:
    client.get(url)  # warm
    spent = []
    for _ in range(runs):
        began = time.perf_counter()
        reply = client.get(url)
        spent.append((time.perf_counter() - began) * 1000)
        assert reply.status_code == 200, (url, reply.status_code, reply.text[:300])
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=1_000_000)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.store or Path(scratch) / "pages.db"
        if not path.exists():
            fill(path, args.seats)
        app = create_app(config(path), upstream=_Never())
        origin = "http://127.0.0.1:8123"
        with TestClient(app, base_url=origin, client=("127.0.0.1", 50000)) as client:
            deep = client.get("/bench/panels", params={"limit": 1}).json()["panels"][0]["id"]
            for _ in range(20):  # a cursor some 20 pages down
                deep = client.get("/bench/panels", params={"before": deep}).json()["next"]
            cases = {
                "GET / (page, models, limits, keys)": "/",
                "GET /?owed=true": "/?owed=true",
                "GET /bench/panels": "/bench/panels",
                "GET /bench/panels?owed=true": "/bench/panels?owed=true",
                "GET /bench/panels?before=<20 pages down>": f"/bench/panels?before={deep}",
                "GET /ui/panels (the live refresh)": "/ui/panels",
            }
            worst = 0.0
            print(f"{'case':<44} {'median ms':>10} {'max ms':>8}")
            for name, url in cases.items():
                spent = timed(client, url, args.runs)
                worst = max(worst, statistics.median(spent))
                print(f"{name:<44} {statistics.median(spent):>10.1f} {max(spent):>8.1f}")
        for owner in (None, "ann"):
            spent = asyncio.run(_store_read(path, owner))
            print(f"store read, owner={owner!s:<6} {spent * 1000:>8.1f} ms")
    verdict = "within" if worst <= BUDGET_MS else "OVER"
    print(f"worst median {worst:.1f} ms: {verdict} the {BUDGET_MS:.0f} ms budget")
    return 0 if worst <= BUDGET_MS else 1


async def _migrated(path: Path) -> None:
    store = SqliteStore(path)
    await store.open()
    await store.close()


async def _store_read(path: Path, owner: str | None) -> float:
    """Seconds the store takes for one page of 20 panels and the owed count (one read)."""
    store = SqliteStore(path)
    await store.open()
    try:
        began = time.perf_counter()
        await store.panels_page(20, owner=owner)
        return time.perf_counter() - began
    finally:
        await store.close()


if __name__ == "__main__":
    raise SystemExit(main())

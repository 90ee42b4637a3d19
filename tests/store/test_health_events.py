"""A model's health changes are events (contract §18), one per change however many processes come
to it: workers and replicas on one store each read the providers' listings (with Redis state,
each worker reads for itself) and each retires the model whose listing says it expired; the
store keeps one event, not one per process."""

from __future__ import annotations

import asyncio

from gateway.state.health import row_of
from routing.health import OK, RETIRED, Record
from tests.store.test_stores import new_store  # noqa: F401  (fixture)

WHY = "expired on 2026-01-01, per the provider's listing"


def kept(alias: str, record: Record, at: float) -> tuple[dict, dict]:
    """The row and event a keeper hands the store for *record*, changed at *at*."""
    event = {"alias": alias, "health": record.health, "why": record.why, "at": at}
    return {**row_of(alias, record), "changed": at}, event


def test_processes_making_the_same_change_at_once_keep_one_event(new_store):  # noqa: F811
    async def scenario() -> list[dict]:
        stores = [new_store() for _ in range(4)]  # four processes' connections to one store
        for store in stores:
            await store.open()
        try:
            retired = Record(RETIRED, WHY, since=100.0, by_hand=True)
            await asyncio.gather(
                *(s.keep_health(*kept("epsilon", retired, 100.0 + n)) for n, s in enumerate(stores))
            )
            await stores[0].keep_health(*kept("epsilon", Record(OK, since=200.0), 200.0))
            await stores[1].keep_health(*kept("epsilon", retired, 300.0))  # a real change again
            rows, events = await stores[2].health_rows()
        finally:
            for store in stores:
                await store.close()
        assert [(r["alias"], r["health"]) for r in rows] == [("epsilon", RETIRED)]
        return events

    events = asyncio.run(scenario())
    assert [(e["health"], e["why"]) for e in events] == [(RETIRED, WHY), (OK, None), (RETIRED, WHY)]

"""The providers' listings read and acted on (contract §19): at start and every
`lifecycle.listing_s`, by one worker at a time (gateway/state/listings.py), in the background.

What a listing decides, and what it never does:
- what it says of each bench model (listed or not, free, its expiry) goes on the board, where
  `/bench/models`, the actions and seating read it;
- a model whose stated `expiration_date` has come is retired through the health records, with
  that date as its why; when a later listing no longer says so (the provider moved the date),
  it is restored;
- a model the listing lacks is unlisted: not explored, but never retired on that alone
  (listings lag both ways);
- a listing that fails, is slow, huge or malformed changes nothing, and is logged once (again
  only when it fails otherwise, or after it was read).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from typing import TYPE_CHECKING

from gateway.state.listings import Listed
from gateway.upstream.listing import TIMEOUT_S, Entry, ListingFailed, match, read_listing
from gateway.upstream.listing_sources import Source, sources
from routing.health import RETIRED

if TYPE_CHECKING:
    from gateway.runtime import Runtime

log = logging.getLogger("bench.listing")

EXPIRED = "expired on {date}, per the provider's listing"
_EXPIRED_PREFIX = "expired on "


async def read_listings(runtime: Runtime) -> bool:
    """Read every listing if a read is due and no other worker is reading; True if read."""
    every = runtime.config.lifecycle.listing_s
    facts = runtime.listings
    if every <= 0 or not facts.take(TIMEOUT_S * 2):
        return False
    try:
        found = sources(runtime.config)
        # (as a probe: within a seat's time, at most TIMEOUT_S)
        timeout = min(runtime.config.gateway.seat_timeout_s or TIMEOUT_S, TIMEOUT_S)
        results = await asyncio.gather(*(_read(source, timeout) for source in found))
        for source, result in zip(found, results, strict=True):
            if isinstance(result, ListingFailed):
                why = runtime.scrub(str(result)) or "failed"
                if facts.said(source.connection, why):
                    log.warning(
                        "the listing of connection %s (%s) %s; nothing changed",
                        source.connection, runtime.scrub(source.url), why,
                    )  # fmt: skip
                continue
            if facts.said(source.connection, None):
                log.info("the listing of connection %s is read again", source.connection)
            await apply(runtime, source, result)
    finally:
        facts.done(every)
        await runtime.live.flush("listing")
    return True


async def _read(source: Source, timeout: float) -> list[Entry] | ListingFailed:
    try:
        return await read_listing(source.url, source.key, timeout_s=timeout)
    except ListingFailed as exc:
        return exc


async def apply(runtime: Runtime, source: Source, entries: list[Entry]) -> None:
    """What one connection's listing says, put on the board and acted on."""
    today = day_of(runtime.clock())
    for alias, name in source.names.items():
        entry = match(name, entries)
        if entry is None:
            runtime.listings.put(alias, Listed(listed=False))
        else:
            runtime.listings.put(alias, Listed(True, entry.free, entry.expires))
        await _expire(runtime, alias, entry, today)


async def _expire(runtime: Runtime, alias: str, entry: Entry | None, today: datetime.date) -> None:
    keeper = runtime.model_health
    record = keeper.book.of(alias)
    by_listing = record.health == RETIRED and (record.why or "").startswith(_EXPIRED_PREFIX)
    expires = entry.expires if entry else None
    if expires is not None and datetime.date.fromisoformat(expires) <= today:
        if record.health != RETIRED and keeper.rules.auto_retire:
            why = EXPIRED.format(date=expires)
            log.warning("%s is retired: %s", alias, why)
            await keeper.retire(alias, why)
    elif by_listing and entry is not None:  # (unlisted is no reason to restore, nor to retire)
        log.warning("%s is restored: its provider's listing no longer says it expired", alias)
        await keeper.restore(alias)


def day_of(now: float) -> datetime.date:
    """The day (UTC) of *now*, the date listings state expiries in."""
    return datetime.datetime.fromtimestamp(now, datetime.UTC).date()


def expiry_actions(runtime: Runtime) -> list[str]:
    """A bench model expiring within `lifecycle.expiry_warn_days`, or expired and still not
    retired (`auto_retire: false`), as an action for `/bench/health` and the dashboard."""
    today = day_of(runtime.clock())
    warn = runtime.config.lifecycle.expiry_warn_days
    found = []
    for model in runtime.config.catalog.models:
        expires = runtime.listings.of(model.alias).expires
        if expires is None:
            continue
        left = (datetime.date.fromisoformat(expires) - today).days
        if left <= 0 and runtime.model_health.book.of(model.alias).health != RETIRED:
            found.append(f"{model.alias} expired on {expires}, per its provider's listing")
        elif 0 < left <= warn:
            days = "1 day" if left == 1 else f"{left} days"
            found.append(
                f"{model.alias} expires on {expires} (in {days}), per its provider's listing"
            )
    return found


async def keep_reading(runtime: Runtime, every_s: float = 1.0) -> None:
    """The background task: a read at start, then whenever one is due."""
    while True:
        try:
            await read_listings(runtime)
        except Exception:
            log.exception("reading the providers' listings failed")
        await asyncio.sleep(every_s)

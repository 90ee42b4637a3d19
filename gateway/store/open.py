"""The store a config's `store:` names: SQLite for `sqlite:///PATH`, PostgreSQL for
`postgresql://...`, each with its spill on local disk for the rows it cannot take for now."""

from pathlib import Path

from gateway.health import Health
from gateway.store.interface import CALL_FIELDS, PANEL_FIELDS, RecordStore
from gateway.store.spill import Spill
from gateway.store.sqlite import SqliteStore

__all__ = ["CALL_FIELDS", "PANEL_FIELDS", "RecordStore", "SqliteStore", "open_store"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(
    url: str,
    *,
    spill_dir: Path | None = None,
    spill_max_bytes: int = 0,
    health: Health | None = None,
) -> RecordStore:
    """The store a config's `store:` names (opened later, by its owner). Seat rows it cannot
    take for now (PostgreSQL down; a SQLite file on a full disk, deleted or replaced) wait in
    *spill_dir* (at most *spill_max_bytes* before new panels are refused), and *health* is told
    while they do; without *spill_dir* they fail (a panel is refused 503 before any call)."""
    prefix = "sqlite:///"
    spill = Spill(spill_dir, spill_max_bytes) if spill_dir is not None else None
    if url.startswith(prefix):
        return SqliteStore(Path(url[len(prefix) :]), spill=spill, health=health)
    if url.startswith(POSTGRES_SCHEMES):
        from gateway.store.postgres import PostgresStore  # psycopg is loaded only when used

        return PostgresStore(url, spill=spill, health=health)
    raise ValueError(
        f"unsupported store {url!r}: expected sqlite:///PATH or postgresql://user:pass@host/db"
    )

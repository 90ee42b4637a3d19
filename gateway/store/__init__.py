"""The record store: the `RecordStore` interface, SQLite and PostgreSQL behind it, and named
migrations."""

from pathlib import Path

from gateway.store.protocol import CALL_FIELDS, PANEL_FIELDS, RecordStore
from gateway.store.sqlite import SqliteStore

__all__ = ["CALL_FIELDS", "PANEL_FIELDS", "RecordStore", "SqliteStore", "open_store"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(url: str) -> RecordStore:
    """The store a config's `store:` names (opened later, by its owner)."""
    prefix = "sqlite:///"
    if url.startswith(prefix):
        return SqliteStore(Path(url[len(prefix) :]))
    if url.startswith(POSTGRES_SCHEMES):
        from gateway.store.postgres import PostgresStore  # psycopg is loaded only when used

        return PostgresStore(url)
    raise ValueError(
        f"unsupported store {url!r}: expected sqlite:///PATH or postgresql://user:pass@host/db"
    )

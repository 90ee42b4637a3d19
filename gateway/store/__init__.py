"""The record store: the `RecordStore` interface, SQLite behind it, and named migrations."""

from pathlib import Path

from gateway.store.protocol import CALL_FIELDS, PANEL_FIELDS, RecordStore
from gateway.store.sqlite import SqliteStore

__all__ = ["CALL_FIELDS", "PANEL_FIELDS", "RecordStore", "SqliteStore", "open_store"]


def open_store(url: str) -> SqliteStore:
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        raise ValueError(f"unsupported store {url!r}: only sqlite:///PATH is built in")
    return SqliteStore(Path(url[len(prefix) :]))

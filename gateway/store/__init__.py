"""The record store: the `RecordStore` interface, SQLite behind it, and named migrations."""

from gateway.store.sqlite import CALL_FIELDS, PANEL_FIELDS, RecordStore, SqliteStore, open_store

__all__ = ["CALL_FIELDS", "PANEL_FIELDS", "RecordStore", "SqliteStore", "open_store"]

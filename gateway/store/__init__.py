"""The record store: the `RecordStore` interface, SQLite and PostgreSQL behind it, and named
migrations."""

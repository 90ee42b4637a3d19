"""The record store: what the gateway asks of one (`interface`: `RecordStore`, with `KeyStore`
and `LimitStore` beside it), the rows both engines keep (`rows`, typed, built in one place) and
every statement they run, written once (`statements`, in each engine's `dialect`); SQLite in
`sqlite/` (its writer thread, its keys and limits, its file's faults and damage) and PostgreSQL
in `postgres/` (its link, its batched writes), each with its named migrations; the store a
config names (`open`), the dashboard's pages (`pages`), the spill rows wait in while a store
cannot take them, and `copy` from one store to another (`copy_back`: PostgreSQL to SQLite;
`copy_tables`: what both move).

May import: config, errors, health. Nothing above it: the store knows rows, not panels."""

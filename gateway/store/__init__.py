"""The record store: the `RecordStore` interface (`interface`), SQLite (`sqlite`, its writer
thread and its keys and limits beside it) and PostgreSQL (`postgres`, its link and its writes)
behind it, the store a config names (`open`), named migrations, the spill PostgreSQL's rows wait
in while it is down, and `copy` from one store to another.

May import: config, errors, health. Nothing above it: the store knows rows, not panels."""

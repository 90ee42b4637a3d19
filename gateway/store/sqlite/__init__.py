"""The record store in one SQLite file (the default): `SqliteStore` (store.py) with its records'
queries, its writer thread (writer.py), its keys and learned limits (keys.py), its named
migrations (migrations.py), and what keeps rows safe while the file cannot take them: which
faults those are and putting a moved file back (file.py, mend.py), the spill's detour
(detour.py)."""

from gateway.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]

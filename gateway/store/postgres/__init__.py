"""The record store on PostgreSQL, for several replicas: `PostgresStore` (store.py) with its
records' queries, its pool and the way an outage becomes a 503 (link.py), the batched seat rows
kept on local disk while it is down (writes.py, batch.py), its keys and learned limits
(keys.py), and its named migrations (migrations.py). Imported only when a config names it, so
psycopg is loaded only then."""

from gateway.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]

"""A batch of panel and seat rows as PostgreSQL statements: as few as possible, each of one
fixed shape.

Why: a batch sent row by row between BEGIN and COMMIT cost PostgreSQL a statement per row and
two more per batch, and this process a protocol message per row and two more round trips. Here
each table's rows go as one array per column, `unnest`ed into one INSERT, and a batch holding
both tables is one statement (the panels' INSERT in a WITH, which runs first, so a seat row
whose panel is in the same batch finds it when its foreign key is checked at the statement's
end). One statement needs no BEGIN or COMMIT: on an autocommit connection it is its own
transaction, committed as a whole or not at all, as the batch was. Only a batch bigger than
`CHUNK` rows per table (spilled rows written back) is several statements, in one transaction.
A fixed shape per table pair (whatever the row count) lets psycopg prepare each statement once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gateway.store.rows import FIELDS, JSON_FIELDS
from gateway.store.spill import Rows

Statement = tuple[bytes, list[list[Any]]]

CHUNK = 1000  # rows of one table in one statement, at most
# each column's array type: the column's own (migrations.py); TEXT unless named here
_TYPES = {
    "created": "float8", "seconds": "float8", "first_token_s": "float8", "started": "float8",
    "finished": "float8", "tokens_in": "int8", "tokens_out": "int8",
}  # fmt: skip


def _insert(table: str, skip_existing: bool) -> str:
    fields = FIELDS[table]
    names = ", ".join(f'"{name}"' for name in fields)
    arrays = ", ".join(f"%s::{_TYPES.get(name, 'text')}[]" for name in fields)
    sql = f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays})"
    return sql + (" ON CONFLICT DO NOTHING" if skip_existing else "")


def _sql(tables: tuple[str, ...], skip_existing: bool) -> bytes:
    parts = [_insert(table, skip_existing) for table in tables]
    if len(parts) == 1:
        return parts[0].encode()
    return f"WITH panels_first AS ({parts[0]}) {parts[1]}".encode()


_SQL: dict[tuple[tuple[str, ...], bool], bytes] = {
    (tables, skip): _sql(tables, skip)
    for tables in (("panels",), ("calls",), ("panels", "calls"))
    for skip in (False, True)
}


def _convert(name: str) -> Any:
    kind = _TYPES.get(name)
    if kind == "float8":
        return float
    if kind == "int8":
        return int
    if name in JSON_FIELDS:
        return json.dumps
    return None  # text as it is: a value that is not one fails its row when sent


def _columns(table: str, rows: list[Mapping[str, Any]]) -> list[list[Any]]:
    """One list per column, each value of the column's type (None stays NULL)."""
    columns = []
    for name in FIELDS[table]:
        convert = _convert(name)
        values = [row.get(name) for row in rows]
        if convert is not None:
            values = [None if v is None else convert(v) for v in values]
        columns.append(values)
    return columns


def statements(rows: Rows, *, skip_existing: bool = False) -> list[Statement]:
    """The statements writing *rows*: one per CHUNK rows of each table, panels first."""
    out: list[Statement] = []
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        by_table: dict[str, list[Mapping[str, Any]]] = {"panels": [], "calls": []}
        for table, row in chunk:
            by_table[table].append(row)
        tables = tuple(table for table in ("panels", "calls") if by_table[table])
        params = [column for table in tables for column in _columns(table, by_table[table])]
        out.append((_SQL[tables, skip_existing], params))
    return out

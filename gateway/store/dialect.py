"""The few ways SQLite's SQL and PostgreSQL's differ in the statements both stores run
(gateway/store/statements.py writes each statement once, with these as its parameters)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dialect:
    name: str
    mark: str  # a parameter
    text: str  # a text parameter compared with IS NULL (PostgreSQL must be told its type)
    order: str  # the column holding the order rows were written in (panels, calls)
    least: str  # the smaller of two values
    lock_call: str  # what keeps two verdicts on one seat in order (SQLite: its one writer)
    bytewise: str  # text ordered byte by byte, as the other engine orders it
    # A panel's seats are `c.panel_id {same} <panel>`: PostgreSQL's `IS NOT DISTINCT FROM`
    # can be neither hashed nor merged on, so it walks each panel's range of the primary key
    # (gateway/store/pages.py says why) rather than hash every seat of the store.
    same: str
    skipping: tuple[str, str]  # (INSERT..., ...) that skips a row already there
    integer: str  # a SUM of integers, as an integer (PostgreSQL's is numeric)

    def marks(self, count: int) -> str:
        return f"({', '.join([self.mark] * count)})"

    def count_if(self, condition: str) -> str:
        """How many rows of the group meet *condition* (None for no rows, in SQLite)."""
        if self.name == "sqlite":
            return f"SUM({condition})"
        return f"COUNT(*) FILTER (WHERE {condition})"

    def day(self, seconds: str) -> str:
        """The calendar day of *seconds* (a time) in the time zone given as a parameter."""
        if self.name == "sqlite":  # (bench_day: a function the SQLite store defines)
            return f"bench_day({seconds}, {self.mark})"
        return f"to_char(to_timestamp({seconds}) AT TIME ZONE {self.mark}, 'YYYY-MM-DD')"

    def among(self, column: str, count: int) -> str:
        """*column* is one of *count* values, given as `ids` makes them."""
        if self.name == "sqlite":
            return f"{column} IN ({', '.join([self.mark] * count)})"
        return f"{column} = ANY({self.mark})"

    def wanted(self, count: int) -> tuple[str, str]:
        """(WITH ..., FROM ...): *count* panel ids as a table `w(id)`, read first, each id's
        seats then found in its range (SQLite keeps a CROSS JOIN's order)."""
        if self.name == "sqlite":
            rows = ", ".join([f"({self.mark})"] * count)
            return f"WITH wanted(id) AS (VALUES {rows}) ", "wanted w CROSS JOIN"
        return "", f"unnest({self.mark}::text[]) AS w(id) JOIN"

    def ids(self, values: list[str]) -> list[Any]:
        """*values* as the parameters of `among` or `wanted`."""
        return list(values) if self.name == "sqlite" else [list(values)]


SQLITE = Dialect(
    name="sqlite",
    mark="?",
    text="?",
    order="rowid",
    least="MIN",
    lock_call="",
    bytewise="",
    same="=",
    skipping=("INSERT OR IGNORE", ""),
    integer="{}",
)
POSTGRES = Dialect(
    name="postgresql",
    mark="%s",
    text="%s::text",
    order="seq",
    least="LEAST",
    lock_call=" FOR UPDATE OF c",
    bytewise=' COLLATE "C"',
    same="IS NOT DISTINCT FROM",
    skipping=("INSERT", " ON CONFLICT DO NOTHING"),
    integer="{}::bigint",
)

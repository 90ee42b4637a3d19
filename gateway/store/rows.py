"""Rows as both stores keep them: JSON fields as text, a key's and a verdict's columns.

SQLite and PostgreSQL hold the same rows (only the engine differs), so what a row holds is
written once, here, and the two stores cannot drift apart; each passes its driver's placeholder
(`?` or `%s`) to the statements built here.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import SupportsKeysAndGetItem

Row = dict[str, Any]

# Columns holding JSON: `dump` writes them, `load` reads them back.
JSON_FIELDS = ("skipped", "notes", "reserves", "real", "false", "failed_over", "dropped")
KEY_COLUMNS = "name, digest, last4, collections, rpm, created, last_used, revoked"
# what a verdict says; one saying what the call's current verdict says is not written again
_SAYS = ("useful", "note", "real", "false")


def dump(name: str, value: Any) -> Any:
    return json.dumps(value) if name in JSON_FIELDS and value is not None else value


def load(row: SupportsKeysAndGetItem[str, Any]) -> Row:
    found = dict(row)
    for name in JSON_FIELDS:
        if isinstance(found.get(name), str):
            found[name] = json.loads(found[name])
    return found


def insert_key(key: Row, mark: str) -> tuple[str, tuple[Any, ...]]:
    """A new gateway key's INSERT and its values (the key's SHA-256, never the key itself)."""
    values = (
        key["name"],
        key["digest"],
        key["last4"],
        None if key["collections"] is None else json.dumps(key["collections"]),
        key["rpm"],
        key["created"],
    )
    sql = "INSERT INTO gateway_keys (name, digest, last4, collections, rpm, created) VALUES "
    return sql + _marks(mark, len(values)), values


def load_key(row: SupportsKeysAndGetItem[str, Any]) -> Row:
    found = dict(row)
    if found["collections"] is not None:
        found["collections"] = json.loads(found["collections"])
    return found


def repeats(verdict: Row, previous: Row | None) -> bool:
    """*verdict* says what the call's current verdict, *previous*, already says."""
    return previous is not None and all(previous[k] == verdict.get(k) for k in _SAYS)


def settled_blind(verdict: Row, previous: Row | None) -> bool:
    """Whether *verdict* is recorded as blind. Its `blind` says the seat's model was hidden
    when it was given; that holds only for a seat's first verdict, since a judged seat shows
    its model. A later one that keeps the same `useful` (a note or claims added) keeps the
    earlier one's flag: what was judged blind is still the same judgement."""
    if previous is None:
        return bool(verdict.get("blind"))
    return bool(previous.get("blind")) and previous["useful"] == bool(verdict["useful"])


def insert_verdict(verdict: Row, previous: Row | None, mark: str) -> tuple[str, tuple[Any, ...]]:
    """A verdict's INSERT and its values: a new row, the call's earlier verdicts kept."""
    values = (
        verdict["call"],
        int(bool(verdict["useful"])),
        verdict.get("note"),
        dump("real", verdict.get("real")),
        dump("false", verdict.get("false")),
        time.time(),
        verdict.get("key_name"),
        int(settled_blind(verdict, previous)),
    )
    sql = (
        'INSERT INTO verdicts (call_id, useful, note, "real", "false", created, key_name, blind) '
        "VALUES "
    )
    return sql + _marks(mark, len(values)), values


VERDICTS_KEPT = 10  # a call's newest verdicts kept (its history, bounded)


def prune_verdicts(call: str, mark: str) -> tuple[str, tuple[Any, ...]]:
    """The DELETE of a call's verdicts older than its newest VERDICTS_KEPT, run after each new
    one (the current verdict is the newest, so it always stays)."""
    sql = (
        f"DELETE FROM verdicts WHERE call_id = {mark} AND id <= (SELECT id FROM verdicts "
        f"WHERE call_id = {mark} ORDER BY id DESC LIMIT 1 OFFSET {mark})"
    )
    return sql, (call, call, VERDICTS_KEPT)


# A call's current verdict, as both stores read it (the newest of its history).
CURRENT_VERDICT = 'SELECT useful, note, "real", "false", created, blind FROM verdicts '


def load_verdict(row: SupportsKeysAndGetItem[str, Any]) -> Row:
    verdict = load(row)
    verdict["useful"] = bool(verdict["useful"])
    verdict["blind"] = bool(verdict["blind"])
    return verdict


def _marks(mark: str, count: int) -> str:
    return f"({', '.join([mark] * count)})"

"""Rows as both stores keep them, built in one place: a panel's row and a seat's (call's) row,
typed, with every column; JSON fields as text; a key's and a verdict's columns; a seat as the
dashboard reads it.

SQLite and PostgreSQL hold the same rows (only the engine differs), so what a row holds is
written once, here, and the two stores (and the spill between them) cannot drift apart. The
statements that write and read them are in gateway/store/statements.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from _typeshed import SupportsKeysAndGetItem

Row = dict[str, Any]


class PanelRow(TypedDict):
    """A panel as recorded: one row of `panels`, its columns in order."""

    id: str
    created: float
    requested_model: str
    collection: str
    shape: str
    shape_by: str
    prompt: str
    key_name: str
    skipped: list[Any] | None
    notes: list[str] | None
    reserves: list[str] | None


class CallRow(TypedDict):
    """A seat (or a route turn) as recorded: one row of `calls`, its columns in order."""

    id: str
    panel_id: str
    seat: str
    alias: str
    model: str
    connection: str
    shape: str
    status: str
    error: str | None
    error_class: str | None
    seconds: float | None
    first_token_s: float | None
    tokens_in: int | None
    tokens_out: int | None
    answer: str | None
    replaces: str | None
    replaced_by: str | None
    started: float
    finished: float | None
    failed_over: list[Any] | None  # route mode: the members that failed the turn before this one
    dropped: list[str] | None  # what of the request this model could not be given
    failure: str | None  # a failed call's class (gateway/request/failure.py); None: answered


PANEL_FIELDS: tuple[str, ...] = tuple(PanelRow.__annotations__)
CALL_FIELDS: tuple[str, ...] = tuple(CallRow.__annotations__)
FIELDS = {"panels": PANEL_FIELDS, "calls": CALL_FIELDS}

# Columns holding JSON: `dump` writes them, `load` reads them back.
JSON_FIELDS = ("skipped", "notes", "reserves", "real", "false", "failed_over", "dropped")
KEY_FIELDS = ("name", "digest", "last4", "collections", "rpm", "created", "last_used", "revoked")
VERDICT_FIELDS = ("call_id", "useful", "note", "real", "false", "created", "key_name", "blind")
# what a verdict says; one saying what the call's current verdict says is not written again
_SAYS = ("useful", "note", "real", "false")


def panel_row(given: Mapping[str, Any]) -> PanelRow:
    """The one builder of a panel's row: every column, in order; one not given is NULL (a
    NOT NULL column left out then fails that row alone, as a bad row)."""
    return cast(PanelRow, {name: given.get(name) for name in PANEL_FIELDS})


def call_row(given: Mapping[str, Any]) -> CallRow:
    """The one builder of a seat's row (as `panel_row`)."""
    return cast(CallRow, {name: given.get(name) for name in CALL_FIELDS})


def values(table: str, row: Mapping[str, Any]) -> list[Any]:
    """A panel's or seat's row as the values of its INSERT, JSON fields as text."""
    return [dump(name, row.get(name)) for name in FIELDS[table]]


def dump(name: str, value: Any) -> Any:
    return json.dumps(value) if name in JSON_FIELDS and value is not None else value


def load(row: SupportsKeysAndGetItem[str, Any]) -> Row:
    found = dict(row)
    for name in JSON_FIELDS:
        if isinstance(found.get(name), str):
            found[name] = json.loads(found[name])
    return found


def key_values(key: Row) -> tuple[Any, ...]:
    """A new gateway key's values (its SHA-256, never the key itself), as statements.insert_key
    takes them."""
    collections = None if key["collections"] is None else json.dumps(key["collections"])
    return key["name"], key["digest"], key["last4"], collections, key["rpm"], key["created"]


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


def verdict_values(verdict: Row, previous: Row | None) -> tuple[Any, ...]:
    """A verdict's values (VERDICT_FIELDS), as statements.insert_verdict takes them: a new row,
    the call's earlier verdicts kept."""
    return (
        verdict["call"],
        int(bool(verdict["useful"])),
        verdict.get("note"),
        dump("real", verdict.get("real")),
        dump("false", verdict.get("false")),
        time.time(),
        verdict.get("key_name"),
        int(settled_blind(verdict, previous)),
    )


def load_verdict(row: SupportsKeysAndGetItem[str, Any]) -> Row:
    verdict = load(row)
    verdict["useful"] = bool(verdict["useful"])
    verdict["blind"] = bool(verdict["blind"])
    return verdict


def seat_view(row: SupportsKeysAndGetItem[str, Any]) -> Row:
    """A seat as a page of panels shows it (statements.seats_of's row): its call id, its latest
    verdict (or None), and whether it is owed one."""
    seat = dict(row)
    useful, note, blind = seat.pop("v_useful"), seat.pop("v_note"), seat.pop("v_blind")
    seat["call"] = seat.pop("id")
    seat["verdict"] = (
        None if useful is None else {"useful": bool(useful), "note": note, "blind": bool(blind)}
    )
    judged = seat["seat"] not in ("merger", "suite")  # (a suite task is scored by its key)
    seat["owed"] = seat["status"] == "ok" and judged and useful is None
    return seat


def verdict_state(row: SupportsKeysAndGetItem[str, Any]) -> str:
    """A call's state (statements.verdict_states' row): judged, pending (answered, unjudged),
    or unanswered."""
    found = dict(row)
    return "judged" if found["judged"] else "pending" if found["status"] == "ok" else "unanswered"

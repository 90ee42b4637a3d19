"""The tables `bench-gateway store copy` moves, either way (gateway/store/copy.py, copy_back.py):
each with its fields and the INSERT, in the target engine's words, that skips a row already
there, and the columns a store from before their migration lacks.
"""

from __future__ import annotations

from typing import Any

from gateway.store.health_rows import COLUMNS as HEALTH_FIELDS
from gateway.store.rows import CALL_FIELDS, KEY_FIELDS, PANEL_FIELDS, VERDICT_FIELDS
from gateway.store.statements import Statements

CHUNK = 1_000

_WINDOW_FIELDS = ("alias", "context_window", "learned")
_LIMIT_FIELDS = ("alias", "until", "why", "source", "learned")
_EVENT_FIELDS = ("alias", "health", "why", "at")
Tables = tuple[tuple[str, tuple[str, ...], str], ...]


def tables(sql: Statements) -> Tables:
    """(table, fields, the INSERT that recognises a row already copied), in the order rows must
    go (a seat after its panel, a verdict after its seat), in the target engine's words. JSON
    fields stay text on both sides."""
    m = sql.dialect.mark

    def not_there(table: str, fields: tuple[str, ...], keys: tuple[str, ...]) -> str:
        names = ", ".join(f'"{name}"' for name in fields)
        found = " AND ".join(f'"{key}" = {m}' for key in keys)
        return (
            f"INSERT INTO {table} ({names}) SELECT {', '.join([m] * len(fields))} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE {found})"
        )

    # a model's health: the newer record wins (a benching, retirement or restore since)
    health = sql.insert_into("model_health", HEALTH_FIELDS) + (
        " ON CONFLICT (alias) DO UPDATE SET "
        + ", ".join(f"{c} = excluded.{c}" for c in HEALTH_FIELDS[1:])
        + " WHERE model_health.changed IS NULL OR model_health.changed < excluded.changed"
    )
    return (
        ("panels", PANEL_FIELDS, sql.insert_skipping["panels"]),
        ("calls", CALL_FIELDS, sql.insert_skipping["calls"]),
        ("verdicts", VERDICT_FIELDS, not_there("verdicts", VERDICT_FIELDS, ("call_id", "created"))),
        ("gateway_keys", KEY_FIELDS, sql.insert_into("gateway_keys", KEY_FIELDS, skipping=True)),
        (
            "learned_windows",
            _WINDOW_FIELDS,
            sql.insert_into("learned_windows", _WINDOW_FIELDS, skipping=True),
        ),
        (
            "learned_limits",
            _LIMIT_FIELDS,
            sql.insert_into("learned_limits", _LIMIT_FIELDS, skipping=True),
        ),
        ("model_health", HEALTH_FIELDS, health),
        (
            "health_events",
            _EVENT_FIELDS,
            not_there("health_events", _EVENT_FIELDS, ("alias", "health", "at")),
        ),
    )


# the fields a row's "already there" test repeats (after its own), by table
REPEATED = {"verdicts": (0, 5), "health_events": (0, 1, 3)}


def with_keys(table: str, chunk: list[list[Any]]) -> list[list[Any]]:
    """Each row with the fields its NOT EXISTS test reads again."""
    repeated = REPEATED.get(table)
    if repeated is None:
        return chunk
    return [[*row, *(row[i] for i in repeated)] for row in chunk]


# Columns a store not yet opened by this version lacks, and what its rows mean there.
ADDED_LATER = {
    ("verdicts", "blind"): "0",  # 0009_blind_verdicts: every earlier verdict open
    ("calls", "dropped"): "NULL",  # 0010_dropped_hints: nothing was named dropped before
    ("calls", "failure"): "NULL",  # 0011_failure_classes: earlier failures have no class
}

"""The statements that keep each model's health (contract §18), written once for both stores.

Why kept: a retired or benched model stays so across a restart (the board is rebuilt from these
rows), and every change of health is an event (when, to what, why), as the contract asks: one
event per change, however many workers and replicas came to it (`news`).
"""

from __future__ import annotations

from typing import Any

COLUMNS = (
    "alias",
    "health",
    "why",
    "since",
    "next_trial",
    "transient",
    "first_gone",
    "gone_class",
    "backoff",
    "last_failure",
    "failed_at",
    "answered_at",
    "by_hand",
    "changed",
)


def upsert_health(row: dict[str, Any], mark: str) -> tuple[str, tuple[Any, ...]]:
    """The statement keeping *row* (a model's record, gateway/state/health.py `row_of`), for a
    store whose placeholder is *mark* (`?` or `%s`)."""
    sets = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:])
    sql = (
        f"INSERT INTO model_health ({', '.join(COLUMNS)}) "
        f"VALUES ({', '.join([mark] * len(COLUMNS))}) ON CONFLICT (alias) DO UPDATE SET {sets}"
    )
    return sql, tuple(row.get(c) for c in COLUMNS)


def insert_event(event: dict[str, Any], mark: str) -> tuple[str, tuple[Any, ...]]:
    """An event: {alias, health, why, at}."""
    values = ", ".join([mark] * 4)
    sql = f"INSERT INTO health_events (alias, health, why, at) VALUES ({values})"
    return sql, (event["alias"], event["health"], event["why"], event["at"])


def stored_health(mark: str) -> str:
    """The statement reading one model's kept health (`health`), or no row."""
    return f"SELECT health FROM model_health WHERE alias = {mark}"


def news(event: dict[str, Any] | None, stored: Any) -> bool:
    """Whether *event* changes the kept health: a worker or replica that came to the same
    change a moment after another (each reading a provider's listing that says a model has
    expired, say) keeps its row, but the change is one event, not one per process."""
    return event is not None and (stored is None or stored["health"] != event["health"])


SELECT_HEALTH = f"SELECT {', '.join(COLUMNS)} FROM model_health"
SELECT_EVENTS = "SELECT alias, health, why, at FROM health_events ORDER BY at, alias"

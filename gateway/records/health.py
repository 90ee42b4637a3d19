"""Each model's and connection's health as people read it (contract §18): `/bench/health`, the
health columns of `/bench/models`, and the actions a person should take.

Read from the board (gateway/state/health.py), like the rest of the live figures.
"""

from __future__ import annotations

from typing import Any

from gateway.records.listings import expiry_actions
from gateway.runtime import Runtime
from routing.health import RETIRED, Record


def health_fields(record: Record) -> dict[str, Any]:
    """The health columns of a `/bench/models` row."""
    return {
        "health": record.health,
        "health_why": record.why,
        "health_since": record.since,
        "next_trial": record.next_trial,
        "last_failure": record.last_failure,
    }


def health_body(runtime: Runtime, drafts: int = 0) -> dict[str, Any]:
    """`GET /bench/health`: models, connections, actions (*drafts*: suite drafts waiting)."""
    keeper = runtime.model_health
    records = keeper.book.all()
    models = [
        {
            "alias": alias,
            "health": r.health,
            "why": r.why,
            "since": r.since,
            "next_trial": r.next_trial,
            "last_failure": r.last_failure,
        }
        for alias, r in records.items()
    ]
    connections = [
        {"name": name, "health": g.health, "why": g.why, "since": g.since}
        for name, g in keeper.connections().items()
    ]
    found = actions(runtime, records, drafts)
    return {"models": models, "connections": connections, "actions": found}


def actions(runtime: Runtime, records: dict[str, Record], drafts: int = 0) -> list[str]:
    """What a person should do: a retired model still named in a collection, a connection
    whose key was refused, a model whose key's variable is unset, a model expiring soon, suite
    drafts waiting."""
    found = []
    catalog = runtime.config.catalog
    for alias, record in records.items():
        if record.health != RETIRED:
            continue
        named = [c.name for c in catalog.collections if alias in c.members]
        if named:
            where = ", ".join(f"bench/{name}" for name in named)
            found.append(f"{alias} is retired ({record.why}) but still named in {where}")
    for state in runtime.model_health.connections().values():
        if state.health == "check_key" and state.why:
            found.append(state.why)
    for alias, why in runtime.config.unready.items():
        found.append(f"{alias} cannot be called: {why}")
    found += expiry_actions(runtime)
    if drafts:
        found.append(
            f"{drafts} suite draft(s) from verdicts' claims wait to be approved or rejected "
            "(GET /bench/suite/drafts, bench-gateway suite drafts)"
        )
    return found

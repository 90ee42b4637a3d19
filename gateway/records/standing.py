"""The evidence as people read it: one row per model (the figures `GET /bench/models` returns and
the dashboard draws), the connections' rpm use now, and the collections.

Read from the board the gateway's workers share, never from the record store: these figures
cost the same with a million seats on record as with none.
"""

from __future__ import annotations

from typing import Any

from gateway.records.health import health_fields
from gateway.runtime import Runtime
from gateway.state.listings import Listed


def model_rows(runtime: Runtime) -> list[dict[str, Any]]:
    """Every configured model with its role, connection, family, figures and cooldown."""
    rows = []
    for model in runtime.config.catalog.models:
        cooldown = runtime.rate_limits.cooldown_of(model.alias)
        rows.append(
            {
                "alias": model.alias,
                "connection": model.connection,
                "role": model.role,
                "family": model.family,
                **runtime.figures.row(model.alias),
                "cooling_until": cooldown.until if cooldown else None,
                "cooling_why": cooldown.why if cooldown else None,
                "cooling_source": cooldown.source if cooldown else None,
                "rpm_used": runtime.rate_limits.rpm_use(model.alias),
                "rpd": runtime.rate_limits.rpd_of(model.alias),
                "used_today": runtime.rate_limits.used_today(model.alias),
                **health_fields(runtime.model_health.book.of(model.alias)),
                **listing_fields(runtime.listings.of(model.alias)),
            }
        )
    return rows


def listing_fields(listed: Listed) -> dict[str, Any]:
    """The listing columns of a `/bench/models` row (contract §19): null where no listing is
    read for its connection."""
    return {"listed": listed.listed, "expires": listed.expires, "free": listed.free}


def useful_rate(row: dict[str, Any]) -> float | None:
    """Useful verdicts over judged seats; None before any verdict."""
    return row["useful"] / row["judged"] if row["judged"] else None


def connection_rows(runtime: Runtime) -> list[dict[str, Any]]:
    """Every connection the models use, with its cap and the calls counted against it now."""
    names = sorted({m.connection for m in runtime.config.catalog.models})
    rows = []
    for name in names:
        use = runtime.rate_limits.connection_use(name)
        rows.append(
            {"name": name, "rpm_used": use[0] if use else None, "rpm": use[1] if use else None}
        )
    return rows


def model_caps(runtime: Runtime) -> dict[str, int]:
    return dict(runtime.config.model_rpm)


def collection_rows(runtime: Runtime) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "members": list(c.members),
            "shape": c.shape or "general",
            "reply": c.reply,
            "description": c.description,
        }
        for c in runtime.config.catalog.collections
    ]

"""The dashboard's view of model health (contract §18): each Models row's health as a person
reads it (why, the next trial of a benched model, a retired one marked plainly), the "action
needed" banner, and retiring or restoring a model from the Models table.

Why the banner repeats `GET /bench/health`'s `actions` word for word: one list of what to do,
whether read on the page, by `bench-gateway status` or by a script. Retire and restore are
`POST /bench/models/{alias}/retire|restore` under the dashboard's own `/ui/` path, so a
signed-in page (whose cookie goes only to `/s/<id>/`) reaches them, with its CSRF token as
every other form of the page.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.access.sessions import check_csrf
from gateway.dashboard.views import allowed
from gateway.endpoints.health import restore_model, retire_model
from gateway.records.health import actions
from gateway.runtime import Runtime
from routing.health import BENCHED, RETIRED


def health_context(
    runtime: Runtime, models: list[dict[str, Any]], connections: list[dict[str, Any]]
) -> dict[str, Any]:
    """The banner's actions; each model row's `health_shown` (what its health cell says), and
    each connection's health (`ok`, `check_key`, `down`) with why."""
    now = runtime.clock()
    for row in models:
        row["health_shown"] = shown(row, now)
    guards = runtime.model_health.connections()
    for row in connections:
        guard = guards.get(row["name"])
        row["health"], row["health_why"] = (guard.health, guard.why) if guard else ("ok", None)
    records = runtime.model_health.book.all()
    return {"actions": actions(runtime, records)}


def shown(row: dict[str, Any], now: float) -> str:
    """`retired`, `benched · next trial in 5 s`, `benched · next trial now`, or `ok`."""
    health = row["health"]
    if health == BENCHED:
        trial = row["next_trial"]
        if trial is None:
            return "benched · no trial until it can be called"
        return "benched · next trial " + ("now" if trial <= now else f"in {trial - now:.0f} s")
    if health == RETIRED:
        return "retired"
    return "ok"


async def retire(request: Request) -> Response:
    allowed(request)
    check_csrf(request)
    return await retire_model(request)


async def restore(request: Request) -> Response:
    allowed(request)
    check_csrf(request)
    return await restore_model(request)


ROUTES = [
    Route("/ui/models/{alias}/retire", retire, methods=["POST"]),
    Route("/ui/models/{alias}/restore", restore, methods=["POST"]),
]

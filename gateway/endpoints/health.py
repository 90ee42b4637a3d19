"""`GET /bench/health`, and retiring or restoring a model by hand (contract §18).

Retire and restore are the dashboard's admin's (loopback without keys, or signed in), and a
signed-in browser's post carries its CSRF token as the dashboard's do.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from gateway.access.sessions import ADMIN_TOKEN_ENV, SESSION_COOKIE, Access, check_csrf
from gateway.endpoints.common import read_body, runtime_of
from gateway.errors import BadRequest, NotFound, Unauthorized
from gateway.records.health import health_body, health_fields
from gateway.replies import JSONResponse
from gateway.request.bounds import json_object
from gateway.runtime import Runtime
from gateway.suite import drafts


async def bench_health(request: Request) -> Response:
    runtime = runtime_of(request)
    await runtime.keys.client(request)
    await runtime.live.refresh()
    waiting = len(await drafts.waiting(runtime.store, code=False))
    return JSONResponse(health_body(runtime, waiting))


def _admin_model(request: Request) -> tuple[Runtime, str]:
    """The runtime and the model named, for the dashboard's admin (as its own routes allow:
    loopback without keys, or signed in); 401 for anyone else, a gateway key included."""
    access: Access = request.app.state.access
    if not access.allowed(request):
        raise Unauthorized(f"Sign in to the dashboard with the admin token ({ADMIN_TOKEN_ENV}).")
    if SESSION_COOKIE in request.cookies:
        check_csrf(request)
    runtime = runtime_of(request)
    alias = request.path_params["alias"]
    if runtime.config.catalog.model(alias) is None:
        raise NotFound(f"No model {alias[:80]!r}.", param="alias")
    return runtime, alias


async def retire_model(request: Request) -> Response:
    runtime, alias = _admin_model(request)
    body = json_object(await read_body(request, 10_000), "The retirement")
    why = body.get("why")
    if not isinstance(why, str) or not why.strip() or len(why) > 500:
        raise BadRequest("`why` must be text (1 to 500 characters).", param="why")
    record = await runtime.model_health.retire(alias, why.strip())
    await runtime.live.flush("health")
    return JSONResponse({"alias": alias, **health_fields(record)})


async def restore_model(request: Request) -> Response:
    runtime, alias = _admin_model(request)
    record = await runtime.model_health.restore(alias)
    await runtime.live.flush("health")
    return JSONResponse({"alias": alias, **health_fields(record)})

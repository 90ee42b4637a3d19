"""`POST /bench/reload`: take the config file again, as SIGHUP does (contract §19).

The dashboard's admin's, as retiring a model is (loopback without keys, or signed in, a signed-in
browser's post carrying its CSRF token). The reload itself is the serving process's
(gateway/serve/reload.py), which sets `app.state.reload`; an app embedded elsewhere has none,
and says so.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from gateway.access.sessions import ADMIN_TOKEN_ENV, SESSION_COOKIE, Access, check_csrf
from gateway.errors import ConfigRefused, Unauthorized
from gateway.replies import JSONResponse


async def reload_config(request: Request) -> Response:
    """What changed (models and collections added, removed, changed), or 409 `config_refused`
    with why the file was not taken (the running config is kept)."""
    access: Access = request.app.state.access
    if not access.allowed(request):
        raise Unauthorized(f"Sign in to the dashboard with the admin token ({ADMIN_TOKEN_ENV}).")
    if SESSION_COOKIE in request.cookies:
        check_csrf(request)
    reload = getattr(request.app.state, "reload", None)
    if reload is None:
        raise ConfigRefused(
            "This gateway cannot reload its config: it was not started by `bench-gateway "
            "serve`. Restart it to take a new config."
        )
    return JSONResponse(await reload())

"""What `serve` and `simulate` log: one summary at start-up, one line per request.

A request's line holds what an operator needs to follow it (method, path, status, the key's
*name*, the panel id, seconds) and never what a caller sent: no key, no query string (clients
put keys in them), no body (prompts). The middleware is enabled by the CLI, not by the app
factory, so an embedded app logs only what its owner asks for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gateway.config.settings import Config

log = logging.getLogger("bench.requests")
started_log = logging.getLogger("bench.serve")

KEY_NAME = "key_name"  # where the key check names the caller: the request's state (scope)


class AccessLog:
    """ASGI middleware: one line per HTTP request once its response is over (a stream too).

    *anonymous*: the key name to show when the app named none (`local` on a gateway without
    keys). *gateway*: False for the simulator, whose lines have no key or panel."""

    def __init__(
        self,
        app: Callable[[Any, Any, Any], Awaitable[None]],
        *,
        anonymous: str = "-",
        gateway: bool = True,
        logger: logging.Logger = log,
    ) -> None:
        self.app = app
        self.anonymous = anonymous
        self.gateway = gateway
        self.logger = logger

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        began = time.perf_counter()
        seen: dict[str, Any] = {"status": None, "panel": None}

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                for name, value in message.get("headers", ()):
                    if name.lower() == b"x-bench-panel":
                        seen["panel"] = value.decode("latin-1")
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except BaseException:
            seen["status"] = seen["status"] or 500
            raise
        finally:
            self.logger.info(self._line(scope, seen, time.perf_counter() - began))

    def _line(self, scope: Any, seen: dict[str, Any], seconds: float) -> str:
        parts = [scope["method"], printable(scope["path"]), str(seen["status"] or "-")]
        if self.gateway:
            named = (scope.get("state") or {}).get(KEY_NAME)
            parts.append(f"key={printable(named or self.anonymous)}")
            parts.append(f"panel={printable(seen['panel'] or '-')}")
        parts.append(f"{seconds:.3f}s")
        return " ".join(parts)


def printable(text: str) -> str:
    """No line breaks or control characters from a request into the log."""
    if text.isprintable() and " " not in text:
        return text
    return "".join(c if c.isprintable() and c != " " else f"\\x{ord(c):02x}" for c in text)


def redacted(url: str) -> str:
    """A store URL without its password (a PostgreSQL URL may carry one)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def summary(path: str, config: Config, workers: int, state: str) -> None:
    """What `serve` loaded, once, before it takes requests."""
    catalog = config.catalog
    collections = ", ".join(f"bench/{c.name}" for c in catalog.collections)
    models = ", ".join(f"{m.alias} ({m.connection})" for m in catalog.models)
    started_log.info("Bench Gateway: config %s", path)
    started_log.info("  store: %s", redacted(config.store))
    started_log.info("  state: %s", state)
    started_log.info("  workers: %d", workers)
    started_log.info("  collections (%d): %s", len(catalog.collections), collections)
    started_log.info("  models (%d): %s", len(catalog.models), models)
    for alias, why in config.unready.items():
        started_log.warning("model %s: %s; it is benched until it is", alias, why)
    for note in config.notes:
        started_log.info("  %s", note)
    for warning in config.warnings:
        started_log.warning("%s", warning)

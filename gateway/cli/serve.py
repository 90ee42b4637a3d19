"""`bench-gateway serve`: the gateway in one process, or in N workers on one port.

The port is bound (or found taken) before anything slow is imported, so a busy port is one line
within a second; the URL is printed the moment the first process takes connections, in every
worker mode, since that, not the start-up log, is what a person waits for.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any, cast

from gateway.config.settings import Config, load_config
from gateway.serve import process
from gateway.serve.ports import bound_socket, url_of


def workers_wanted(flag: int | str | None, config: Config) -> int:
    """The flag wins over the config (`gateway.workers`), which wins over auto: one per core."""
    wanted = flag if flag is not None else config.gateway.workers
    if wanted == "auto":
        return os.cpu_count() or 1
    return int(wanted)


def serve(path: str, host: str, port: int, workers: int | str | None = None) -> int:
    from gateway.upstream.providers import check_providers

    process.own()
    process.hold_hang_ups()  # a reload asked while starting is taken once serving
    path = str(Path(path).resolve())  # what a reload reads again, wherever it is asked from
    config = load_config(path)
    check_providers(config)  # a model litellm could not call: a config problem, not a seat's
    if not _loopback(host) and not config.gateway.require_keys:
        print(
            f"bench-gateway: refusing to bind {host}: a gateway reachable from other machines "
            "needs gateway.require_keys: true in the config (then create keys with "
            "`bench-gateway keys create NAME`).",
            file=sys.stderr,
        )
        return 1
    count = workers_wanted(workers, config)
    # one process keeps its socket; workers bind their own, so only check nobody holds it
    sock = bound_socket(host, port)  # PortInUse: one line from the CLI
    if count > 1:
        sock.close()

    from gateway.runtime import board_room
    from gateway.serve import access_log as serverlog
    from gateway.serve import rolling
    from gateway.serve import workers as processes
    from gateway.serve.connection import PROTOCOL
    from gateway.serve.reload import Reloading
    from gateway.serve.server import run_server

    url = url_of(host, port)

    def listening() -> None:
        serverlog.started_log.info(
            "Listening on %s: the API at %s/v1, the dashboard at %s/ (Ctrl-C stops)", url, url, url
        )

    # uvicorn re-raises a captured SIGTERM once it has drained; a no-op handler here turns that
    # into a clean return, so a drained shutdown exits 0.
    signal.signal(signal.SIGTERM, lambda *_: None)
    options: dict[str, Any] = dict(
        host=host,
        port=port,
        log_level="info",
        access_log=False,
        proxy_headers=False,  # believed from gateway.trusted_proxies only (gateway/app.py)
        timeout_graceful_shutdown=int(config.gateway.drain_timeout_s),
        http=PROTOCOL,  # request heads bounded in size and time (gateway/serve/connection.py)
    )
    if count == 1:
        serverlog.summary(path, config, 1, "in this process (one worker)")
        app = processes.served_app(config)
        reloading = cast(Reloading, app.app)  # SIGHUP reloads (gateway/serve/reload.py)
        return run_server(app, sock, listening, reloading.hang_up, **options)
    with processes.shared_board(board_room(config)) as board:
        serverlog.summary(path, config, count, f"board {board}, shared by the workers")
        return rolling.run(path, host, port, count, options, str(board), listening, config)


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

"""`serve --workers N`: N gateway processes on one port, each with a listening socket of its own.

Why not uvicorn's own workers: they share one listening socket, and whichever worker wakes first
accepts every connection waiting, so a burst of panels lands mostly on one process (measured
here: 1,000 panels at once split about 2:1) while the other core idles. With SO_REUSEPORT each
worker listens on its own socket and the kernel spreads new connections across them evenly.
Where the platform has no SO_REUSEPORT the workers share one socket, as uvicorn's would, under
the same supervisor: a reload there replaces them as it does here. (uvicorn's own supervisor,
once used there, gave a new worker 5 s to start, less than the gateway's start-up takes, so its
reload was abandoned every time, and it closed an old worker's idle connections under clients
about to reuse them.)

The supervisor (gateway/serve/rolling.py) holds those sockets and starts, watches, replaces and
stops the workers: a worker that dies is started again on its socket; SIGTERM or SIGINT is passed
on to every worker, which drains its running panels (records included) and exits; the
supervisor exits 0 once they all have. SIGHUP reloads the config, one worker at a time. The CLI
makes the board every worker maps (gateway/board.py), so that cooldowns, rpm caps and rotation
hold for the gateway as a whole, and removes it at the end.

A worker tells the supervisor over a pipe when it listens: the supervisor prints the gateway's
URL once the first does. A port another program holds is found by `serve` before any worker
starts (`PortInUse`, one line from the CLI).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from gateway.board import Board
from gateway.config.settings import Config
from gateway.serve import process

log = logging.getLogger("bench.workers")


def supported() -> bool:
    return hasattr(socket, "SO_REUSEPORT")


def worker_context() -> Any:
    """Where workers come from: forked from a server process that has imported the gateway
    (litellm, the MCP SDK) once, where the platform has one; else spawned, each importing it.

    Why: the import is most of a worker's start-up (~5 s of CPU here), and spawned workers paid
    it once each, on cores they share, so two workers took twice one's time to serve (and a
    replaced worker as long again). The supervisor itself imports none of it. The fork server
    has no thread, no loop and no connection when it forks; each worker builds its app, store
    connection and loop after."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["gateway.app"])
    return context


@contextlib.contextmanager
def shared_board(size: tuple[int, int]) -> Iterator[Path]:
    """A new board file of (cells, slots) in a folder only this user can read, removed after;
    in /dev/shm where there is one, so the kernel never writes its pages back to a disk."""
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="bench-gateway-", dir=memory) as folder:
        path = Path(folder) / "board"
        Board.create(path, *size)
        yield path


def served_app(
    config: Config,
    board: Board | None = None,
    *,
    onboarding: tuple[str, ...] = (),
    handoff: Callable[[], None] | None = None,
    workers: int = 1,
) -> process.AfterStartup:
    """The app a `serve` process runs: the gateway of the moment (replaced on a reload:
    gateway/serve/reload.py, the `Reloading` at `.app`), each with its request log, and the
    collector tuned once the first start-up is over (gateway/serve/process.py: the process
    owner's, not the app's). *board*: the workers' shared one; else one of this process's own,
    with room for a larger reloaded config."""
    from gateway.access.masked import mask_logs
    from gateway.access.secrets import Mask
    from gateway.app import create_app
    from gateway.request.client import LOCAL
    from gateway.runtime import board_room
    from gateway.serve.access_log import AccessLog
    from gateway.serve.reload import Reloading

    kept = board or Board.private(*board_room(config))
    secrets: list[str] = []  # every config's this process has served, masked in every log line

    def build(config: Config) -> Any:
        app = create_app(config, board=kept)
        app.add_middleware(AccessLog, anonymous="-" if config.gateway.require_keys else LOCAL)
        secrets.extend(secret for secret in config.secrets if secret not in secrets)
        mask_logs(Mask(tuple(secrets)))
        return app

    reloading = Reloading(
        str(config.path or ""), config, build, board=kept, onboarding=onboarding,
        handoff=handoff, workers=workers,
    )  # fmt: skip
    return process.AfterStartup(reloading)


def serve_one(
    path: str,
    sock: socket.socket,
    options: dict[str, Any],
    board: str,
    tell: Connection,
    onboarding: tuple[str, ...],
    workers: int,
) -> None:
    """One worker: its app, store connection and loop of its own, on one of the supervisor's
    sockets (a replaced worker's successor takes the same one); the board is the one all
    workers share. *tell*: the supervisor's pipe (`listening` once it takes connections,
    `reload` when `POST /bench/reload` asks for one)."""
    process.own()
    import uvicorn

    from gateway.config.settings import load_config
    from gateway.serve.server import Server

    pid = os.getpid()
    app = served_app(
        load_config(path), Board.attach(Path(board)), onboarding=onboarding,
        handoff=lambda: tell.send(("reload", pid)), workers=workers,
    )  # fmt: skip
    server = Server(
        uvicorn.Config(app, **options),
        listening=lambda: tell.send(("listening", pid)),
        reload=lambda: None,  # a hang-up reaches the supervisor too: it replaces the workers
        replaceable=True,
    )
    # uvicorn re-raises a captured SIGTERM once it has drained; a no-op handler turns that into
    # a clean exit 0.
    signal.signal(signal.SIGTERM, lambda *_: None)
    _stop_when_orphaned(server)
    server.run(sockets=[sock])


def _stop_when_orphaned(server: Any) -> None:
    """A supervisor killed outright (SIGKILL, OOM) passes nothing on: its workers would serve
    on, unwatched, forever. Each worker watches its parent instead and, once it is gone, drains
    its running panels and exits, as on SIGTERM."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        log.warning("the supervisor is gone; worker [%d] drains and stops", os.getpid())
        server.should_exit = True

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()

"""`serve --workers N`: N gateway processes on one port, each with a listening socket of its own.

Why not uvicorn's own workers: they share one listening socket, and whichever worker wakes first
accepts every connection waiting, so a burst of panels lands mostly on one process (measured
here: 1,000 panels at once split about 2:1) while the other core idles. With SO_REUSEPORT each
worker listens on its own socket and the kernel spreads new connections across them evenly.

The supervisor starts, watches and stops: a worker that dies is started again; SIGTERM, SIGINT
or SIGHUP is passed on to every worker (as SIGTERM), which drains its running panels (records
included) and exits; the supervisor exits 0 once they all have. It also makes the board every
worker maps (gateway/board.py), so that cooldowns, rpm caps and rotation hold for the
gateway as a whole, and removes it at the end.

A worker tells the supervisor over a pipe when it listens: the supervisor prints the gateway's
URL once the first does. A port another program holds is found by `serve` before any worker
starts (`PortInUse`, one line from the CLI); one taken in between makes a worker exit
`PORT_IN_USE`, and the supervisor stops the rest and raises the same.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from gateway.board import Board
from gateway.config.settings import Config
from gateway.serve import process
from gateway.serve.ports import PortInUse, bound_socket

log = logging.getLogger("bench.workers")
PORT_IN_USE = 98  # a worker's exit code when its port was taken (errno EADDRINUSE's number)


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


def served_app(config: Config, board: Board | None = None) -> Any:
    """The app a `serve` process runs: the gateway, its request log, and the collector tuned
    once its start-up is over (gateway/serve/process.py: the process owner's, not the app's)."""
    from gateway.access.masked import mask_logs
    from gateway.access.secrets import Mask
    from gateway.app import create_app
    from gateway.request.client import LOCAL
    from gateway.serve.access_log import AccessLog

    app = create_app(config, board=board)
    app.add_middleware(AccessLog, anonymous="-" if config.gateway.require_keys else LOCAL)
    mask_logs(Mask(config.secrets))  # every log line of this process, its secrets masked
    return process.AfterStartup(app)


def app_for_uvicorn_worker() -> Any:
    """For `serve --workers N` on uvicorn's own workers (no SO_REUSEPORT): each worker builds
    its app from BENCH_CONFIG and maps the board named by BENCH_BOARD."""
    process.own()
    from gateway.config.settings import load_config

    # uvicorn's own supervisor answers SIGHUP by replacing its workers, each drained as on
    # SIGTERM; a worker ignores the terminal's hang-up itself, which would cut its requests
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    board = Board.attach(Path(os.environ["BENCH_BOARD"]))
    return served_app(load_config(os.environ["BENCH_CONFIG"]), board)


def run(
    path: str,
    host: str,
    port: int,
    workers: int,
    options: dict[str, Any],
    board: str,
    listening: Callable[[], None],
) -> int:
    """Supervise *workers* processes serving *path* on one port, sharing *board*; *listening*
    is called once, when the first worker takes connections. The caller has checked that no
    other program holds the port (workers of another gateway would let ours share it)."""
    context = worker_context()
    told, tell = context.Pipe(duplex=False)  # each worker sends its pid once it listens
    stopping, heard, busy = False, False, False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # SIGTERM: the worker drains, then exits 0

    def start() -> Any:
        proc = context.Process(
            target=serve_one, args=(path, host, port, options, board, tell), daemon=False
        )
        proc.start()
        log.info("Started worker process [%d]", proc.pid)
        return proc

    def hang_up(signum: int, frame: Any) -> None:
        """SIGHUP: drained and stopped as on SIGTERM (a terminal's hang-up reaches the workers
        too, and each drains on its own: gateway/serve/server.py). Reloading the config, a later
        change, slots in here: the workers are told to reload instead of to stop."""
        stop(signum, frame)

    # Ignored while the workers start: the fork server (and the resource tracker) inherit it
    # across their exec, so a terminal's hang-up does not end them under draining workers
    # (whose exit they report); each worker's server then takes SIGHUP as a drain.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    procs = [start() for _ in range(workers)]
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, hang_up)
    while any(proc.is_alive() for proc in procs):  # a killed worker is replaced at once
        ready = wait([told, *(proc.sentinel for proc in procs if proc.is_alive())], timeout=1.0)
        if told in ready:
            told.recv()
            if not heard:
                heard = True
                listening()
        for i, proc in enumerate(procs):
            if stopping or proc.is_alive():
                continue
            if proc.exitcode == PORT_IN_USE:  # taken since the check: said once, by the CLI
                busy = True
                stop(signal.SIGTERM, None)
                break
            if proc.exitcode > 0:  # it failed (a bad config, say): another would too
                log.error("worker [%d] failed (exit %d); stopping", proc.pid, proc.exitcode)
                stop(signal.SIGTERM, None)
                break
            log.warning("worker [%d] ended (%d); starting another", proc.pid, proc.exitcode)
            procs[i] = start()
    for proc in procs:
        proc.join()
    if busy:
        raise PortInUse(host, port)
    # 1 only if a worker failed; one stopped while still starting ends by the signal itself (it
    # had nothing to drain), one killed just before the stop was not replaced, and neither failed
    return 0 if stopping and all(proc.exitcode <= 0 for proc in procs) else 1


def serve_one(
    path: str, host: str, port: int, options: dict[str, Any], board: str, tell: Connection
) -> None:
    """One worker: its own socket on the shared port, its own app, store connection and loop;
    the board is the one all workers share. *tell*: the supervisor's pipe."""
    process.own()
    import uvicorn

    from gateway.config.settings import load_config
    from gateway.serve.server import Server

    try:
        sock = bound_socket(host, port, share_port=True)
    except PortInUse:
        sys.exit(PORT_IN_USE)
    app = served_app(load_config(path), Board.attach(Path(board)))
    server = Server(uvicorn.Config(app, **options), listening=lambda: tell.send(os.getpid()))
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

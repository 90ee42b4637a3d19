"""The supervisor of `serve --workers N`: starts the workers, replaces one that dies, stops them
all on SIGTERM or SIGINT, and on SIGHUP (or a worker's `POST /bench/reload`) replaces them one
at a time on the config file as it is now.

Why the supervisor holds the listening sockets (one per worker, SO_REUSEPORT; one for them all
where the platform has none): a socket that closes resets every connection the kernel had queued
on it, so a worker that owned its socket could not be replaced without failing some requests
under traffic. Here a worker's successor is started on the same socket; once it listens, the
old worker is told to stop (SIGUSR1: it stops accepting, finishes what it has in flight, records
included, answers the next request on each connection it has open with `Connection: close`, and
exits), and connections still queued are accepted by the successor. Then the next worker. A
config `check-config` refuses is not taken: one line in the log, every worker kept; the board
must have room for it too (gateway/runtime.py `board_fits`). A SIGHUP that came while the
gateway started is acted on once every worker listens.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
from collections.abc import Callable
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from gateway.board import Board
from gateway.config.changes import changes
from gateway.config.settings import Config
from gateway.errors import ConfigRefused
from gateway.serve import process
from gateway.serve.ports import bound_socket
from gateway.serve.workers import serve_one, supported, worker_context

log = logging.getLogger("bench.workers")


def run(
    path: str,
    host: str,
    port: int,
    workers: int,
    options: dict[str, Any],
    board: str,
    listening: Callable[[], None],
    config: Config,
) -> int:
    """Supervise *workers* processes serving *path* on one port, sharing *board*; *listening*
    is called once, when the first worker takes connections; *config*: the one checked at
    start (what a reload is compared with). Other programs on the port are the caller's to
    check (workers of another gateway would let ours share it)."""
    sockets = listening_sockets(host, port, workers)
    try:
        return Supervisor(path, config, sockets, options, board, listening).run()
    finally:
        for sock in set(sockets):
            sock.close()


def listening_sockets(host: str, port: int, workers: int) -> list[socket.socket]:
    """One socket per worker (SO_REUSEPORT: the kernel spreads new connections over them); where
    the platform has no SO_REUSEPORT, one socket every worker accepts on (whichever wakes first
    takes what waits, so a burst spreads less evenly), replaced and reloaded the same way."""
    if supported():
        return [bound_socket(host, port, share_port=True) for _ in range(workers)]
    return [bound_socket(host, port)] * workers


class Supervisor:
    def __init__(
        self,
        path: str,
        config: Config,
        sockets: list[socket.socket],
        options: dict[str, Any],
        board: str,
        listening: Callable[[], None],
    ) -> None:
        self.path, self.running, self.sockets = path, config, sockets
        self.options, self.board, self.listening = options, board, listening
        self.context = worker_context()
        self.told, self.tell = self.context.Pipe(duplex=False)
        self.slots: list[Any] = []  # the worker serving on each socket
        self.retiring: list[Any] = []  # replaced workers, draining
        self.incoming: tuple[int, Any] | None = None  # a successor, until it listens
        self.queue: list[int] = []  # sockets whose worker a reload has yet to replace
        self.onboarding: tuple[str, ...] = ()  # for the first successor of a reload only
        self.pending: Config | None = None
        self.listened: set[int] = set()  # workers that took connections
        self.wanted = self.stopping = self.heard = False

    def start(self, index: int, onboarding: tuple[str, ...] = ()) -> Any:
        args = (self.path, self.sockets[index], self.options, self.board, self.tell)
        proc = self.context.Process(
            target=serve_one, args=(*args, onboarding, len(self.sockets)), daemon=False
        )
        proc.start()
        log.info("Started worker process [%d]", proc.pid)
        return proc

    def everyone(self) -> list[Any]:
        incoming = [self.incoming[1]] if self.incoming else []
        return [*self.slots, *self.retiring, *incoming]

    def stop(self, signum: int, frame: Any) -> None:
        self.stopping = True
        for proc in self.everyone():
            if proc.is_alive():
                proc.terminate()  # SIGTERM: the worker drains, then exits 0

    def hang_up(self, signum: int, frame: Any) -> None:
        self.wanted = True  # acted on by the loop, not in the handler

    def run(self) -> int:
        # Ignored while the fork server (and the resource tracker) start: they inherit it across
        # their exec, so a terminal's hang-up does not end them under the workers (whose exits
        # they report), nor the workers forked from them before they take it over. Blocked
        # meanwhile, so that one sent then waits for the handler rather than being lost. Spawned
        # workers (no fork server) inherit it only if it is ignored while they start.
        hang_up = {signal.SIGHUP}
        signal.pthread_sigmask(signal.SIG_BLOCK, hang_up)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if fork_server_started(self.context):
            signal.signal(signal.SIGHUP, self.hang_up)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, hang_up)
        # one held by the CLI, or come since: reloaded once every worker listens
        self.wanted = self.wanted or process.hung_up_while_starting()
        self.slots = [self.start(i) for i in range(len(self.sockets))]
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        signal.signal(signal.SIGHUP, self.hang_up)
        while any(proc.is_alive() for proc in self.everyone()):
            alive = [proc.sentinel for proc in self.everyone() if proc.is_alive()]
            if self.told in wait([self.told, *alive], timeout=1.0):
                while self.told.poll():
                    self.heard_from(*self.told.recv())
            if not self.stopping:
                self.reload_if_wanted()
                self.watch()
        for proc in self.everyone():
            proc.join()
        # 1 only if a worker failed; one stopped while still starting ends by the signal itself
        # (it had nothing to drain), one killed just before the stop was not replaced, and
        # neither failed
        return 0 if self.stopping and all(proc.exitcode <= 0 for proc in self.slots) else 1

    def heard_from(self, what: str, pid: int) -> None:
        if what == "reload":
            self.wanted = True
            return
        self.listened.add(pid)
        if not self.heard:
            self.heard = True
            self.listening()
        if self.incoming is None or self.incoming[1].pid != pid:
            return
        index, proc = self.incoming
        old, self.slots[index] = self.slots[index], proc
        self.incoming = None
        self.retiring.append(old)
        with contextlib.suppress(ProcessLookupError):  # (it died meanwhile: nothing to stop)
            os.kill(old.pid, signal.SIGUSR1)  # it stops taking connections, answers, exits
        log.info("Worker [%d] replaced by [%d] on the new config", old.pid, pid)
        if not self.queue and self.pending is not None:
            self.running, self.pending = self.pending, None
            log.info("Reloaded %s: every worker is on the new config", self.path)

    def reload_if_wanted(self) -> None:
        serving = all(proc.pid in self.listened for proc in self.slots)  # (none still starting)
        if self.wanted and serving and self.incoming is None and not self.queue:
            self.wanted = False
            self.begin_reload()
        if self.queue and self.incoming is None:
            index = self.queue.pop(0)
            self.incoming = (index, self.start(index, self.onboarding))
            self.onboarding = ()

    def begin_reload(self) -> None:
        from gateway.serve.reload import load_checked, onboarding, takeable

        log.info("Reloading the config from %s.", self.path)
        try:
            config = load_checked(self.path)
            board = Board.attach(Path(self.board))
            try:
                takeable(config, self.running, board)
            finally:
                board.close()
        except ConfigRefused as exc:
            log.error("Reload refused, the running config is kept: %s", exc.message)
            return
        found = changes(self.running, config)
        self.pending, self.onboarding = config, onboarding(config, found)
        self.queue = list(range(len(self.slots)))
        log.info(
            "Reloading %s: %s; replacing the %d workers one at a time",
            self.path, found.summary(), len(self.slots),
        )  # fmt: skip

    def watch(self) -> None:
        """A worker that died is started again; one that failed stops the gateway (another
        would fail as it did); a successor that failed abandons the reload."""
        self.retiring = [proc for proc in self.retiring if proc.is_alive()]
        if self.incoming is not None and not self.incoming[1].is_alive():
            failed = self.incoming[1]
            log.error(
                "Reload abandoned: a worker on the new config failed (exit %s) before it "
                "listened; the workers not yet replaced keep the config they run",
                failed.exitcode,
            )
            self.incoming, self.queue, self.pending = None, [], None
        for i, proc in enumerate(self.slots):
            if proc.is_alive():
                continue
            if proc.exitcode > 0:  # it failed (a bad config, say): another would too
                log.error("worker [%d] failed (exit %d); stopping", proc.pid, proc.exitcode)
                self.stop(signal.SIGTERM, None)
                return
            log.warning("worker [%d] ended (%d); starting another", proc.pid, proc.exitcode)
            self.slots[i] = self.start(i)


def fork_server_started(context: Any) -> bool:
    """Start *context*'s fork server now, if it has one (it is otherwise started by the first
    worker's start, seconds later): True if it did."""
    if context.get_start_method() != "forkserver":
        return False
    from multiprocessing import forkserver

    forkserver.ensure_running()
    return True

"""What tests/state/test_board.py runs in other processes, and how it starts and ends them.

A module of its own so that a spawned child imports nothing but this and the board: the test
module brings the app, the SDKs and litellm (seconds and ~250 MB a process), and four children
importing that at once on a loaded machine ran past the joins' limit. The children wait for
each other (a barrier) before they touch the board, so their work overlaps however slowly each
one started; and each is handed the instant it works at, so no rpm window expires in a slow run.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Iterator
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from gateway.board import Board

# A hang guard, never a margin: a child's whole work is well under a second of board operations.
HANG_S = 120.0
SPAWN = multiprocessing.get_context("spawn")


def take_many(together: Barrier, path: str, now: float, cap: int, tries: int, results: Any) -> None:
    board = Board.attach(Path(path))
    together.wait(HANG_S)
    got = 0
    for _ in range(tries):
        if not isinstance(board.take([("model:x", cap)], now), str):
            got += 1
    results.put(got)


def add_many(together: Barrier, path: str, times: int) -> None:
    board = Board.attach(Path(path))
    together.wait(HANG_S)
    for _ in range(times):
        board.add("counted", 1, 2)


def take_and_die(together: Barrier, path: str, now: float, cap: int) -> None:
    board = Board.attach(Path(path))
    together.wait(HANG_S)
    board.take([("model:x", cap)], now)  # in flight, never released


@contextlib.contextmanager
def processes(target: Callable[..., None], args: tuple[Any, ...], n: int = 4) -> Iterator[None]:
    """*n* processes running `target(together, *args)`, which start their work together once
    all are ready; the body runs while they work (to read what they send back), and each must
    then exit 0. Any still running after a failure is killed: a failed test leaves none behind."""
    together = SPAWN.Barrier(n)
    procs = [SPAWN.Process(target=target, args=(together, *args)) for _ in range(n)]
    try:
        for proc in procs:
            proc.start()
        yield
        for proc in procs:
            proc.join(HANG_S)
            assert proc.exitcode == 0, f"a board process ended with {proc.exitcode}"
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join()


def run(target: Callable[..., None], args: tuple[Any, ...], n: int = 4) -> None:
    """`processes` with nothing to read while they work."""
    with processes(target, args, n):
        pass

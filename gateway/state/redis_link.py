"""The one connection to Redis: a round trip (`step`), the mirror it refreshes, and what happens
when Redis is unreachable.

A step runs gateway/state/live.lua once: the changes this worker queued (the journal), then the
caller's own operations, atomically, and returns every cell that changed since this worker's
last reply, which are written to the board (this worker's mirror of the shared figures).

Faults: a step that fails (refused, reset, or no reply within `SOCKET_S`) marks Redis down,
once, in `/healthz` (`degraded`); from then on no request waits on Redis: the callers serve on
the board alone, queueing their changes (at most `JOURNAL_MAX`), while `watch()` tries again
every `RETRY_S`. Back up, the queue is sent; a Redis that came back empty is seeded from the
board, which has carried on meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections import Counter
from collections.abc import Callable
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from gateway.board import Board, BoardFull
from gateway.health import Health

log = logging.getLogger("bench.state")

CONNECT_S = 0.5  # a replica never waits longer than this to learn Redis is gone
SOCKET_S = 1.5
RETRY_S = 2.0  # while down, try again this often (in the background, never in a request)
JOURNAL_MAX = 50_000  # changes queued while Redis is down; older ones are dropped past this
PART = "state"
_SCRIPT = files("gateway.state").joinpath("live.lua").read_text(encoding="utf-8")


class Down(Exception):
    """Redis did not answer this step; the caller serves on the board."""


class RedisLink:
    def __init__(
        self,
        url: str,
        board: Board,
        journal: list[list[Any]],
        clock: Callable[[], float],
        health: Health,
    ) -> None:
        self.board, self.journal, self.clock, self.health = board, journal, clock, health
        parts = urlsplit(url)
        self.where = f"redis at {parts.hostname}:{parts.port or 6379}"
        self.client = redis.Redis.from_url(
            url,
            socket_connect_timeout=CONNECT_S,
            socket_timeout=SOCKET_S,
            retry=Retry(NoBackoff(), 0),
            decode_responses=True,
        )
        self.script = self.client.register_script(_SCRIPT)
        self.up = False  # until the first step answers
        self.seen = 0  # the sequence number of the newest reply written to the board
        self.epoch = ""  # which seeding of Redis those numbers count in
        self.counts: Counter[str] = Counter()  # round trips by what caused them
        self._dropped = False

    async def step(self, ops: list[list[Any]], kind: str) -> list[Any]:
        """One round trip: the journal, then *ops*; the results of *ops*. Down: the journal
        is kept for the next step."""
        queued = self.journal[:]
        del self.journal[:]
        try:
            reply = await self._send(queued + ops, kind)
            if reply[2] == "empty":  # Redis lost its state (or never had any): seed it
                reply = await self._send([self._seed(), *ops], kind)  # the board has `queued`
                return list(reply[2][1:])
        except Down:
            self.journal[:0] = queued
            self.bound()
            raise
        return list(reply[2][len(queued) :])

    async def _send(self, ops: list[list[Any]], kind: str) -> list[Any]:
        request = {"since": self.seen, "epoch": self.epoch, "now": self.clock(), "ops": ops}
        payload = json.dumps(request)
        self.counts[kind] += 1
        try:
            reply = await self.script(args=[payload])
        except (TimeoutError, RedisError, OSError) as exc:
            self.up = False
            why = f"{self.where} unreachable ({_said(exc)}); serving on this worker's own state"
            self.health.degraded(PART, why)
            raise Down from exc
        if not self.up:
            self.up = True
            self.health.recovered(PART)
        if reply[2] != "empty":
            self._mirror(int(reply[0]), reply[1], reply[3])
        return list(reply)

    def _seed(self) -> list[Any]:
        """Everything on the board, for an empty Redis (only the first replica's seed is kept)."""
        cells = [
            [name, f"{a!r} {b!r} {text}"]
            for name, a, b, text in self.board.named_cells()
            if not name.startswith("ring:")  # where this board keeps its rpm windows
        ]
        return ["seed", secrets.token_hex(8), cells]

    def _mirror(self, top: int, epoch: str, cells: list[str]) -> None:
        """Write a reply's cells to the board, unless a newer reply has been written already."""
        if epoch == self.epoch and top < self.seen:
            return
        self.epoch, self.seen = epoch, top
        board = self.board
        try:
            with board.locked():
                for i in range(0, len(cells), 2):
                    if not cells[i].startswith("ring:"):  # (the board's own, never shared)
                        a, b, text = cells[i + 1].split(" ", 2)
                        board.write(cells[i], float(a), float(b), text)
        except BoardFull:
            log.error("this worker's board has no room for every shared figure")

    def bound(self) -> None:
        if len(self.journal) > JOURNAL_MAX:
            del self.journal[: len(self.journal) - JOURNAL_MAX]
            if not self._dropped:
                self._dropped = True
                log.error("dropping the oldest live-state changes while %s is down", self.where)

    async def watch(self) -> None:
        """While Redis is down, try it again every RETRY_S (sending what was queued)."""
        while True:
            await asyncio.sleep(RETRY_S)
            if not self.up:
                try:
                    await self.step([], "reconnect")
                except Down:
                    continue

    async def close(self) -> None:
        await self.client.aclose()

    def figures(self) -> dict[str, Any]:
        return {
            "redis": self.where,
            "up": self.up,
            "round_trips": sum(self.counts.values()),
            "by_cause": dict(self.counts),
            "queued": len(self.journal),
        }


def _said(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


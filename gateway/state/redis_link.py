"""The one connection to Redis: a round trip (`step`), the mirror it refreshes, and what happens
when Redis is unreachable.

A step runs gateway/state/live.lua once (conversations.lua's operations loaded with it): the
changes this worker queued (the journal), then the caller's own operations, atomically, and
returns every cell that changed since this worker's last reply, which are written to the board
(this worker's mirror of the shared figures). Each step also publishes the cells it wrote, and
`watch()` listens: a seating on another replica reaches this board within a moment, not only
at this worker's next round trip, so the panel chosen here next already rotates past it. Every
cell carries the sequence number of its write, and the board takes a cell only if it is newer
than what it has, whichever way (reply or publication) and in whatever order it comes.

Faults: a step that fails (refused, reset, or no reply within `SOCKET_S`) marks Redis down,
once, in `/healthz` (`degraded`); from then on no request waits on Redis: the callers serve on
the board alone, queueing their changes (at most `JOURNAL_MAX`), while `watch()` tries again
every `RETRY_S`. Back up, the queue is sent; a Redis that came back empty is seeded from the
board, which has carried on meanwhile.

Group commit (`commit`): changes that need no answer wait for no round trip of their own while
another is in flight. They join the next step, whatever asks for it (a seating, a slot, or the
first of them once the link is quiet, after one turn of the event loop, so the changes that
landed in the same turn go together), and each caller returns once its changes are in Redis.

A seat's end that only counts its answer (`later`, ops in `COUNTS`) waits for nothing: no
replica decides anything on that count before its next seating, so it rides the next step this
worker sends for any reason or, if none comes within `DEFER_S`, a step of its own. Under load a
panel's finishes then cost no round trip at all, and the seat's answer is recorded without
waiting on Redis first. A finish that frees an rpm slot (a capped model's) or learned something
(a cooldown) still commits and waits: the next panel on any replica must see the slot free and
must not call a cooling model.

A step publishes only news another replica must hear before it seats its next panel: a seating,
a cooldown, a verdict. A step that only ends seats (`QUIET`: slots released, answers counted)
publishes nothing; what it wrote reaches the other workers with their next step's reply, which
brings every cell changed since their last. So a panel is about one publication, not three,
and every worker hears a third as much.
"""

from __future__ import annotations

import asyncio
import contextlib
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

CONNECT_S = 1.0  # a replica never waits longer than this to learn Redis is gone
SOCKET_S = 2.0
RETRY_S = 2.0  # while down, try again this often (in the background, never in a request)
JOURNAL_MAX = 50_000  # changes queued while Redis is down; older ones are dropped past this
PART = "state"
CHANNEL = "bench:changes"
LISTEN_S = 0.25  # how long the listener waits for news before looking whether to stop
POOL = 16  # connections per worker (opened at start); a step waits at most SOCKET_S for one
DEFER_S = 0.05  # the longest an answer's count waits for another step to ride on
COUNTS = frozenset({"add"})  # a seat's end of only these rides the next step (`later`)
# the ops a seat's end sends when all went well (its slot released, its answer counted): no
# other replica needs them before its next reply, so a step of only these publishes nothing
QUIET = frozenset({"release", "add"})
# one script: the route conversations' operations, then the step that runs every operation
_SCRIPT = "\n".join(
    files("gateway.state").joinpath(name).read_text(encoding="utf-8")
    for name in ("conversations.lua", "live.lua")
)


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
        pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=POOL,
            timeout=SOCKET_S,
            socket_connect_timeout=CONNECT_S,
            socket_timeout=SOCKET_S,
            decode_responses=True,
        )
        self.client = redis.Redis(connection_pool=pool, retry=Retry(NoBackoff(), 0))
        self.script = self.client.register_script(_SCRIPT)
        self.up = False  # until the first step answers
        self.seen = 0  # every change up to this sequence number is on the board
        self.epoch = ""  # which seeding of Redis those numbers count in
        self.written: dict[str, int] = {}  # cell -> the sequence number of its value here
        self.counts: Counter[str] = Counter()  # round trips by what caused them
        self.joined: Counter[str] = Counter()  # commits that rode on another's round trip
        self._flying = 0  # steps in flight
        self._carried: set[asyncio.Future[bool]] = set()  # of those, the ones carrying changes
        self._next: asyncio.Future[bool] | None = None  # the changes the next step will carry
        self._lull: asyncio.Future[None] | None = None  # done once no step is in flight
        self._due: asyncio.TimerHandle | None = None  # sends the counts no step took
        self._sending: set[asyncio.Task[None]] = set()  # the steps `_due` started
        origin = secrets.token_hex(4)  # this worker, in its steps' publications
        self._origin, self._mine = origin, f'{{"origin":"{origin}",'
        self.closing = asyncio.Event()  # `watch` ends once this is set
        self._dropped = False

    async def step(self, ops: list[list[Any]], kind: str) -> list[Any]:
        """One round trip: the journal, then *ops*; the results of *ops*. Down: the journal
        is kept for the next step."""
        queued = self.journal[:]
        del self.journal[:]
        if self._due is not None:  # this step takes what waited for one
            self._due.cancel()
            self._due = None
        carried, self._next = self._next, None
        if queued and carried is None:
            carried = asyncio.get_running_loop().create_future()
        if carried is not None:
            self._carried.add(carried)
        self._flying += 1
        landed = False
        try:
            reply = await self._send(queued + ops, kind)
            if reply[2] == "empty":  # Redis lost its state (or never had any): seed it
                reply = await self._send([self._seed(), *ops], kind)  # the board has `queued`
                landed = True
                return list(reply[2][1:])
            landed = True
        except Down:
            self.journal[:0] = queued
            self.bound()
            raise
        finally:
            self._landed(carried, landed)
        return list(reply[2][len(queued) :])

    def _landed(self, carried: asyncio.Future[bool] | None, landed: bool) -> None:
        """A step ended: wake the commits it carried, and, once none is in flight, the ones
        waiting for a step to join (the first of them sends it)."""
        if carried is not None:
            self._carried.discard(carried)
            if not carried.done():
                carried.set_result(landed)
        self._flying -= 1
        if self._flying == 0 and self._lull is not None:
            if not self._lull.done():
                self._lull.set_result(None)
            self._lull = None

    async def commit(self, kind: str) -> None:
        """Return once every change queued so far is in Redis, or Redis is found down (the
        journal keeps them). With a step in flight, join the next one rather than send one."""
        loop = asyncio.get_running_loop()
        while self.up:
            if self._flying == 0:
                if self.journal:
                    await self._gather()
                    with contextlib.suppress(Down):
                        await self.step([], kind)
                return
            if not self.journal:  # what was queued is on its way already
                if self._carried:
                    self.joined[kind] += 1
                    await asyncio.wait(list(self._carried))
                return
            if self._next is None:
                self._next = loop.create_future()
            batch = self._next
            if self._lull is None:
                self._lull = loop.create_future()
            await asyncio.wait((batch, self._lull), return_when=asyncio.FIRST_COMPLETED)
            if batch is not self._next:  # a step took it: wait for that one to land
                self.joined[kind] += 1
                await asyncio.wait((batch,))
                return
        self.bound()  # sent by the watcher once Redis is back

    def later(self) -> None:
        """The journal holds only counts: they go with the next step sent, or in one of their
        own within DEFER_S."""
        if self._due is None and self.journal:
            self._due = asyncio.get_running_loop().call_later(DEFER_S, self._send_due)

    def _send_due(self) -> None:
        self._due = None
        if self.up and self.journal:
            task = asyncio.get_running_loop().create_task(self.commit("finish"))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def settle(self) -> None:
        """Before closing: no step starts later, and the ones started for counts end."""
        if self._due is not None:
            self._due.cancel()
            self._due = None
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    async def _gather(self) -> None:
        """One turn of the event loop, counted as a step in flight, so the finishes that
        landed in the same turn queue theirs and join the step this one then sends."""
        self._flying += 1
        try:
            await asyncio.sleep(0)
        finally:
            self._landed(None, True)  # (a waiter woken here finds the step in flight, or none)

    async def _send(self, ops: list[list[Any]], kind: str) -> list[Any]:
        request = {
            "since": self.seen, "epoch": self.epoch, "now": self.clock(), "origin": self._origin,
            "ops": ops, "publish": any(op[0] not in QUIET for op in ops),
        }  # fmt: skip
        payload = json.dumps(request)
        self.counts[kind] += 1
        try:
            reply = await self.script(args=[payload])
        except (TimeoutError, RedisError, OSError) as exc:
            self._fail(exc)
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
        """Write a reply's cells (name, sequence number, value) to the board."""
        if epoch != self.epoch:  # Redis was seeded anew: its numbers start again
            self.epoch, self.seen = epoch, 0
            self.written.clear()
        self.seen = max(self.seen, top)
        self._write([(cells[i], int(cells[i + 1]), cells[i + 2]) for i in range(0, len(cells), 3)])

    def heard(self, message: str) -> None:
        """A step's publication: the cells it wrote, all at one sequence number. Every step that
        writes takes the next number, so publications heard without a gap keep `seen` current,
        and this worker's next reply brings only what it has not heard. This worker's own
        steps' news is skipped unread: each step's reply already brought what it wrote."""
        if message.startswith(self._mine):
            return
        news = json.loads(message)
        seq = int(news["seq"])
        if news["epoch"] != self.epoch or seq <= self.seen:
            return
        cells = news["cells"]
        self._write([(cells[i], seq, cells[i + 1]) for i in range(0, len(cells), 2)])
        if seq == self.seen + 1:
            self.seen = seq

    def _write(self, cells: list[tuple[str, int, str]]) -> None:
        board, written = self.board, self.written
        try:
            with board.locked():
                for name, seq, value in cells:
                    if seq > written.get(name, -1) and not name.startswith("ring:"):
                        written[name] = seq
                        a, b, text = value.split(" ", 2)
                        board.write(name, float(a), float(b), text)
        except BoardFull:
            log.error("this worker's board has no room for every shared figure")

    def bound(self) -> None:
        if len(self.journal) > JOURNAL_MAX:
            del self.journal[: len(self.journal) - JOURNAL_MAX]
            if not self._dropped:
                self._dropped = True
                log.error("dropping the oldest live-state changes while %s is down", self.where)

    async def watch(self) -> None:
        """Listen to the other replicas' changes while Redis is up; while it is down, try it
        again every RETRY_S (sending what was queued). Ends once `closing` is set (not by
        cancelling: a subscription cancelled mid-read does not always let go)."""
        while not self.closing.is_set():
            if self.up:
                try:
                    await self._listen()
                except (TimeoutError, RedisError, OSError) as exc:
                    self._fail(exc)
            else:
                # the pool's connections died with the server: start afresh
                await self.client.connection_pool.disconnect()
                with contextlib.suppress(Down):
                    await self.step([], "reconnect")
                    await self.warm()
                    continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closing.wait(), RETRY_S)

    async def _listen(self) -> None:
        pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(CHANNEL)
            while self.up and not self.closing.is_set():
                message = await pubsub.get_message(timeout=LISTEN_S)
                if message is not None:
                    self.heard(message["data"])
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _fail(self, exc: BaseException) -> None:
        self.up = False
        why = f"{self.where} unreachable ({_said(exc)}); serving on this worker's own state"
        self.health.degraded(PART, why)

    async def warm(self) -> None:
        """Open the pool's connections now, not in a burst of panels."""
        with contextlib.suppress(TimeoutError, RedisError, OSError):
            await asyncio.gather(*(self.client.ping() for _ in range(POOL)))

    async def close(self) -> None:
        await self.client.aclose()

    def round_trips(self) -> dict[str, Any]:
        return {
            "redis": self.where,
            "up": self.up,
            "round_trips": sum(self.counts.values()),
            "by_cause": dict(self.counts),
            "joined": dict(self.joined),
            "queued": len(self.journal),
        }


def _said(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__

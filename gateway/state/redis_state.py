"""The live state in Redis (`state: redis://host:port/db`): replicas on several machines keep one
set of cooldowns, rpm windows, day counts, seating evidence and route conversations.

Seating a panel is one round trip. The panel is chosen on this worker's board (the mirror), and
one step then, atomically in Redis: checks that no other replica has seated the chosen
explorers since the mirror last heard (else nothing is done and the panel is chosen again on
the fresher mirror it brought back, which is how explorers keep rotating across replicas),
spends the key's rpm, marks the seats, and takes each seat's rpm slot (cooldowns and day caps
checked there, in flight until the seat ends). A seat's end is one more (`flush`): its slot
released, its answer counted, anything learned on the way. Everything else reads the mirror.

Redis down: everything runs on the board, as one gateway would (gateway/state/redis_link.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from typing import Any

from gateway import quota_signals
from gateway.board import Board
from gateway.conversations import Conversations, Key, Turn, converse_op, new_conversation, turn_of
from gateway.errors import GatewayError
from gateway.health import Health
from gateway.keys import Client, Gatekeeper, key_ring, over_rpm
from gateway.ledger import Ledger, seated_cell, seated_op
from gateway.limits import (
    Cooldown,
    Permit,
    RateLimits,
    Refused,
    capped_rings,
    cool_cell,
    cooling_for,
)
from gateway.settings import Config
from gateway.state import Choose, Seating
from gateway.state.local import LocalState
from gateway.state.redis_link import Down, RedisLink
from routing import Panel

TRIES = 3  # choices per panel; the last one is not checked, so seating always ends
Marks = list[tuple[str, tuple[float, float], tuple[float, float]]]  # cell, before, after


class SharedPermit(Permit):
    """An rpm slot held in Redis; releasing it queues the release for the next round trip."""

    def __init__(self, journal: list[list[Any]], slots: list[list[str]]) -> None:
        self._journal, self._held = journal, slots

    def release(self) -> None:
        if self._held:
            self._journal.append(["release", self._held])
            self._held = []


class RedisState:
    def __init__(
        self,
        config: Config,
        clock: Any,
        board: Board,
        parts: tuple[Ledger, RateLimits, Conversations, Gatekeeper],
        journal: list[list[Any]],
        health: Health,
    ) -> None:
        assert config.state is not None
        self.ledger, self.limits, self.conversations, self.gatekeeper = parts
        self.board, self.clock = board, clock
        self.local = LocalState(board, self.ledger, self.limits, self.conversations)
        self.link = RedisLink(config.state, board, journal, clock, health)
        self.gatekeeper.spends = False  # spent in the seating step instead
        self._board_used = self.limits.used
        self.limits.used = self._used
        self.rings = [name for name, _ in capped_rings(config)]
        self.stale_s = max(2.0 * config.gateway.seat_timeout_s, 600.0)  # a replica died
        self._use: dict[str, int] = {}
        self._tokens = itertools.count(1)
        self._me = secrets.token_hex(4)
        self.panels = self.finishes = self.conflicts = 0
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        with contextlib.suppress(Down):
            await self.link.step([], "start")
        self._watch = asyncio.get_running_loop().create_task(self.link.watch(), name="state")

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        if self.link.up and self.link.journal:
            with contextlib.suppress(Down):
                await self.link.step([], "close")
        await self.link.close()

    # --- seating --------------------------------------------------------------------------------

    async def seat(
        self, choose: Choose, shape: str, nominees: tuple[str, ...], client: Client, now: float
    ) -> Seating:
        self.panels += 1
        for attempt in range(TRIES):
            if not self.link.up:
                return self._seat_here(choose, shape, client, now)
            plan, expected, marks = self._choose(choose, shape, nominees, now)
            checked = bool(expected) and attempt < TRIES - 1
            key = self._key_take(client, now)
            takes = [self._take(chair.alias, now) for chair in plan.seats]
            ops = [["check", expected]] if checked else []
            ops += [key] if key else []
            ops += [seated_op([chair.alias for chair in plan.seats], now)]
            ops += [op for op, _ in takes]
            try:
                results = await self.link.step(ops, "seat")
            except Down:
                self._unmark(marks)
                return self._seat_here(choose, shape, client, now)
            if checked and results.pop(0)[0] == "conflict":
                self.conflicts += 1
                self._unmark(marks)
                continue
            if key:
                answer = results.pop(0)
                if answer[0] != "ok":
                    self._unmark(marks)
                    raise over_rpm(client, float(answer[2]) if answer[2] else None, now)
            results.pop(0)  # the marks
            permits = {
                chair.name: self._permit(chair.alias, result, slots, now)
                for chair, (_, slots), result in zip(plan.seats, takes, results, strict=True)
            }
            return Seating(plan, permits)
        raise AssertionError("the last choice is never checked")

    def _choose(
        self, choose: Choose, shape: str, nominees: tuple[str, ...], now: float
    ) -> tuple[Panel, list[list[Any]], Marks]:
        """A panel on the mirror, marked there too (so this worker's next panel rotates), with
        the explorers' last seating as the mirror knew it, for the step to check."""
        board, limits = self.board, self.limits
        with board.locked():
            evidence = self.ledger.evidence(limits.cooling(now), shape, limits.scarce(now))
            plan = choose(evidence)
            expected: list[list[Any]] = [
                [seated_cell(c.alias), board.numbers(seated_cell(c.alias))[1]]
                for c in plan.seats
                if c.name.startswith("explorer") and c.alias not in nominees
            ]
            marks: Marks = []
            for chair in plan.seats:
                cell = seated_cell(chair.alias)
                before = board.numbers(cell)
                self.ledger.mark(chair.alias, now)
                marks.append((cell, before, board.numbers(cell)))
        return plan, expected, marks

    def _unmark(self, marks: Marks) -> None:
        """Take back this worker's marks of a panel not seated (unless a reply overwrote them)."""
        with self.board.locked():
            for cell, before, after in marks:
                if self.board.numbers(cell) == after:
                    self.board.write(cell, *before)

    def _seat_here(self, choose: Choose, shape: str, client: Client, now: float) -> Seating:
        slots = self.gatekeeper.spend(client)
        try:
            return self.local.seat_here(choose, shape, now)
        except GatewayError:
            if slots:
                self.board.forget(slots)
            raise

    # --- rpm slots ------------------------------------------------------------------------------

    def _token(self) -> str:
        return f"{self._me}.{next(self._tokens)}"

    def _take(self, alias: str, now: float) -> tuple[list[Any], list[list[str]]]:
        """The step's operation taking a call's slots, and the (ring, token) pairs it holds."""
        limits, token = self.limits, self._token()
        rings = limits.rings_of(alias)
        caps = [[cell, cap] for cell, cap, _ in limits.day_caps(alias)]
        today = float(quota_signals.day_of(now, limits.zone))
        op = [
            "take", [[name, cap] for name, cap in rings], token, True, cool_cell(alias), caps,
            today, limits.day_cells(alias), False, self.stale_s,
        ]  # fmt: skip
        return op, [[name, token] for name, _ in rings]

    def _key_take(self, client: Client, now: float) -> list[Any] | None:
        if not client.rpm:
            return None
        ring = [[key_ring(client), client.rpm]]
        return ["take", ring, self._token(), False, False, [], 0, [], True, self.stale_s]

    def _permit(
        self, alias: str, result: list[str], slots: list[list[str]], now: float
    ) -> Permit | Refused:
        limits = self.limits
        if result[0] == "ok":
            return SharedPermit(self.link.journal, slots)
        if result[0] == "cooling":
            until, why, spent = float(result[1]), result[2], int(result[3])
            caps = limits.day_caps(alias)
            spent_why = caps[spent - 1][2] if 0 < spent <= len(caps) else None
            cooldown = limits.longer(Cooldown(until, why) if until > now else None, spent_why, now)
            return cooling_for(cooldown or Cooldown(until, why), now)
        return limits.over(alias, result[1], float(result[2]) if result[2] else None, now)

    async def acquire(self, alias: str) -> Permit | Refused:
        if self.link.up:
            now = self.clock()
            op, slots = self._take(alias, now)
            with contextlib.suppress(Down):
                (result,) = await self.link.step([op], "acquire")
                return self._permit(alias, result, slots, now)
        return self.limits.acquire(alias)

    def _used(self, name: str, cap: int, now: float) -> int:
        if self.link.up and name in self._use:
            return self._use[name]
        return int(self._board_used(name, cap, now))

    # --- the rest -------------------------------------------------------------------------------

    async def flush(self, kind: str = "finish") -> None:
        if kind == "finish":
            self.finishes += 1
        if not self.link.journal:
            return
        if not self.link.up:
            self.link.bound()  # sent by the watcher once Redis is back
            return
        with contextlib.suppress(Down):
            await self.link.step([], kind)

    async def refresh(self) -> None:
        if self.link.up:
            with contextlib.suppress(Down):
                (counts,) = await self.link.step([["use", self.rings, self.stale_s]], "refresh")
                self._use = dict(zip(self.rings, map(int, counts), strict=True))

    async def begin_turn(self, key: Key, members: tuple[str, ...], client: Client) -> Turn:
        if self.link.up:
            take = self._key_take(client, self.clock())
            ops = [take] if take else []
            with contextlib.suppress(Down):
                results = await self.link.step(
                    [*ops, converse_op(key, new_conversation())], "turn"
                )
                if take and results[0][0] != "ok":
                    answer = results[0]
                    raise over_rpm(client, float(answer[2]) if answer[2] else None, self.clock())
                return turn_of(results[-1], members)
        self.gatekeeper.spend(client)
        return self.conversations.begin(key, members)

    def settle_turn(self, key: Key, members: tuple[str, ...], member: str) -> None:
        self.conversations.settle(key, members, member)

    def figures(self) -> dict[str, Any]:
        return {
            **self.link.figures(),
            "panels": self.panels,
            "seat_finishes": self.finishes,
            "conflicts": self.conflicts,
        }

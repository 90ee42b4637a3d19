"""The live state in Redis (`state: redis://host:port/db`): replicas on several machines keep one
set of cooldowns, rpm windows, day counts, seating evidence and route conversations.

Seating a panel is one round trip. The panel is chosen on this worker's board (the mirror, which
hears every replica's seatings as they happen), and one step then, atomically in Redis: spends
the key's rpm, gives the explorer chairs to routing's candidates that no replica seated since
the mirror heard (gateway/state/chairs.py: how explorers keep rotating when two replicas seat
at the same moment), marks the seats, and takes each seat's rpm slot (cooldowns and day caps
checked there, in flight until the seat ends). A seat's end (`flush`) that only counts its
answer rides the next step, or one of its own within a moment; one that frees a capped model's
rpm slot or learned something on the way (a cooldown) is one more round trip, shared with the
finishes around it. Everything else reads the mirror.

Redis down: everything runs on the board, as one gateway would (gateway/state/redis_link.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import Callable
from typing import Any

from gateway.access.keys import Keys, key_ring, over_rpm
from gateway.board import Board
from gateway.config.settings import Config
from gateway.errors import GatewayError
from gateway.health import Health
from gateway.request.client import Client
from gateway.state import quota_signals
from gateway.state.chairs import as_seated, explorer, family, with_explorers
from gateway.state.conversations import (
    Conversations,
    Key,
    Turn,
    converse_op,
    new_conversation,
    turn_of,
)
from gateway.state.figures import LATEST, Figures, seated_cell
from gateway.state.limits import (
    Cooldown,
    Permit,
    RateLimits,
    Refused,
    capped_rings,
    cool_cell,
    cooling_for,
)
from gateway.state.live import Choose, Seating
from gateway.state.local import LocalState
from gateway.state.redis_link import COUNTS, Down, RedisLink, log
from routing import Panel, Refusal, Seat

# a seat marked on this worker's board: (cell, its numbers before, the version of them it had)
Marks = list[tuple[str, tuple[float, float], int]]


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
        clock: Callable[[], float],
        board: Board,
        parts: tuple[Figures, RateLimits, Conversations, Keys],
        journal: list[list[Any]],
        health: Health,
    ) -> None:
        assert config.state is not None
        self.figures, self.limits, self.conversations, self.keys = parts
        self.board, self.clock = board, clock
        self.local = LocalState(board, self.figures, self.limits, self.conversations)
        self.link = RedisLink(config.state, board, journal, clock, health)
        self.keys.spends = False  # spent in the seating step instead
        self._board_used = self.limits.used
        self.limits.used = self._used
        self.rings = [name for name, _ in capped_rings(config)]
        self.stale_s = max(2.0 * config.gateway.seat_timeout_s, 600.0)  # a replica died
        self._use: dict[str, int] = {}
        self._tokens = itertools.count(1)
        self._me = secrets.token_hex(4)
        self.config = config
        self.panels = self.finishes = self.swaps = 0
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        with contextlib.suppress(Down):
            await self.link.step([], "start")
            await self.link.warm()
        self._watch = asyncio.get_running_loop().create_task(self.link.watch(), name="state")

    async def close(self) -> None:
        if self._watch is not None:
            self.link.closing.set()
            _, late = await asyncio.wait({self._watch}, timeout=5.0)
            for task in late:
                log.error("the live state's listener did not stop in time")
                task.cancel()
        await self.link.settle()
        if self.link.up and self.link.journal:
            with contextlib.suppress(Down):
                await self.link.step([], "close")
        await self.link.close()

    # --- seating --------------------------------------------------------------------------------

    async def seat(
        self, choose: Choose, shape: str, nominees: tuple[str, ...], client: Client, now: float
    ) -> Seating:
        self.panels += 1
        if not self.link.up:
            return self._seat_here(choose, shape, client, now)
        plan, chairs, candidates, marks = self._choose(choose, shape, nominees, now)
        fixed = [chair for chair in plan.seats if chair not in chairs]
        held = {chair.alias: self._spec(chair.alias, now) for chair in fixed}
        held.update({alias: self._spec(alias, now) for alias, _ in candidates})
        catalog = self.config.catalog
        panel = {
            "latest": LATEST,
            "fixed": [[seated_cell(c.alias), held[c.alias][0]] for c in fixed],
            "chairs": len(chairs),
            "candidates": [
                [alias, seated_cell(alias), last, family(catalog, alias), held[alias][0]]
                for alias, last in candidates
            ],
        }
        key = self._key_take(client, now)
        try:
            results = await self.link.step([*([key] if key else []), ["seat", panel]], "seat")
        except Down:
            self._unmark(marks)
            return self._seat_here(choose, shape, client, now)
        if key:
            answer = results.pop(0)
            if answer[0] != "ok":
                self._unmark(marks)
                raise over_rpm(client, float(answer[2]) if answer[2] else None, now)
        picked, outcomes = results[0]
        if picked != [chair.alias for chair in chairs]:  # another replica seated one just now
            self.swaps += 1
            self._unmark([m for m in marks if m[0] not in {seated_cell(a) for a in picked}])
            plan = with_explorers(plan, chairs, picked)
        named = {seat.name: seat for seat in plan.seats}
        seats = [*fixed, *(named[chair.name] for chair in chairs)]  # as the step took them
        permits = {
            seat.name: self._permit(seat.alias, outcome, held[seat.alias][1], now)
            for seat, outcome in zip(seats, outcomes, strict=True)
        }
        return Seating(plan, permits)

    def _choose(
        self, choose: Choose, shape: str, nominees: tuple[str, ...], now: float
    ) -> tuple[Panel, list[Seat], list[tuple[str, float]], Marks]:
        """A panel on the mirror, marked there too (so this worker's next panel rotates); its
        explorer chairs (not nominated); and the candidates for them in routing's order, with
        their last seating as the mirror knew it: the chosen explorers, then the ones routing
        would choose were those seated, for the step to fall back on."""
        board, limits = self.board, self.limits
        with board.locked():
            evidence = self.figures.evidence(limits.cooling(now), shape, limits.scarce(now))
            plan = choose(evidence)
            chairs = [c for c in plan.seats if explorer(c, nominees)]
            aliases = [c.alias for c in chairs]
            if chairs:
                with contextlib.suppress(Refusal):
                    later = choose(as_seated(evidence, aliases, now))
                    aliases += [
                        c.alias for c in later.seats
                        if explorer(c, nominees) and c.alias not in aliases
                    ]  # fmt: skip
            candidates = [(a, board.numbers(seated_cell(a))[1]) for a in aliases]
            marks: Marks = []
            for chair in plan.seats:
                cell = seated_cell(chair.alias)
                marks.append((cell, board.numbers(cell), self.link.written.get(cell, -1)))
                self.figures.mark(chair.alias, now)
        return plan, chairs, candidates, marks

    def _unmark(self, marks: Marks) -> None:
        """Take back this worker's marks of seats not taken, unless Redis's word on them has
        come since (it is the truth)."""
        with self.board.locked():
            for cell, before, version in marks:
                if self.link.written.get(cell, -1) == version:
                    self.board.write(cell, *before)

    def _seat_here(self, choose: Choose, shape: str, client: Client, now: float) -> Seating:
        slots = self.keys.spend(client)
        try:
            return self.local.seat_here(choose, shape, now)
        except (GatewayError, Refusal):
            if slots:
                self.board.forget(slots)
            raise

    # --- rpm slots ------------------------------------------------------------------------------

    def _token(self) -> str:
        return f"{self._me}.{next(self._tokens)}"

    def _spec(self, alias: str, now: float) -> tuple[list[Any], list[list[str]]]:
        """How the step takes a call's slots (live.lua's `take`), and the (ring, token) pairs
        the call then holds."""
        limits, token = self.limits, self._token()
        rings = limits.rings_of(alias)
        caps = [[cell, cap] for cell, cap, _ in limits.day_caps(alias)]
        today = float(quota_signals.day_of(now, limits.zone))
        spec = [
            [[name, cap] for name, cap in rings], token, True, cool_cell(alias), caps, today,
            limits.day_cells(alias), self.stale_s,
        ]  # fmt: skip
        return spec, [[name, token] for name, _ in rings]

    def _key_take(self, client: Client, now: float) -> list[Any] | None:
        if not client.rpm:
            return None
        ring = [[key_ring(client), client.rpm]]
        return ["take", [ring, self._token(), False, False, [], 0, [], self.stale_s], True]

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
            spec, slots = self._spec(alias, now)
            with contextlib.suppress(Down):
                (result,) = await self.link.step([["take", spec, False]], "acquire")
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
        if not self.link.journal and not self.link.up:
            return
        if kind == "finish" and self.link.up and all(op[0] in COUNTS for op in self.link.journal):
            self.link.later()  # only its answer counted: it rides the next step
            return
        await self.link.commit(kind)

    async def refresh(self) -> None:
        if self.link.up:
            with contextlib.suppress(Down):
                (counts,) = await self.link.step([["use", self.rings, self.stale_s]], "refresh")
                self._use = dict(zip(self.rings, map(int, counts), strict=True))

    async def begin_turn(
        self, key: Key, members: tuple[str, ...], client: Client, fresh: bool = False
    ) -> Turn:
        if self.link.up:
            take = self._key_take(client, self.clock())
            ops = [take] if take else []
            with contextlib.suppress(Down):
                converse = converse_op(key, new_conversation(), fresh)
                results = await self.link.step([*ops, converse], "turn")
                if take and results[0][0] != "ok":
                    answer = results[0]
                    raise over_rpm(client, float(answer[2]) if answer[2] else None, self.clock())
                return turn_of(results[-1], members)
        self.keys.spend(client)
        return self.conversations.begin(key, members, fresh)

    def settle_turn(self, key: Key, members: tuple[str, ...], member: str) -> None:
        self.conversations.settle(key, members, member)

    def round_trips(self) -> dict[str, Any]:
        return {
            **self.link.round_trips(),
            "panels": self.panels,
            "seat_finishes": self.finishes,
            "explorers_swapped": self.swaps,
        }

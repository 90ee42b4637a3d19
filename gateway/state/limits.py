"""Cooldowns after rate limits, rpm and rpd caps per model and per connection, and what providers
say about their limits.

A model that answered 429 is not called again until its cooldown ends: free tiers punish a
client that keeps knocking. How long is the provider's word where it gave one (headers or the
message, read by gateway/state/quota_signals.py): a daily or monthly limit cools until its
stated reset or the next day (month) boundary, never for a default minute, and a success that
says no requests remain cools the model before the next call meets a 429. An rpm cap is spent
by calls started in the last 60 s plus any still in flight, so a burst of concurrent panels
cannot overrun it; an rpd
cap by calls started on that calendar day (`gateway.quota_day_tz`). All of it lives on the board
(gateway/board.py), so every worker of one gateway keeps the same cooldowns, caps and counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gateway.board import WINDOW_S, Board
from gateway.config.settings import Config
from gateway.state import quota_signals
from gateway.state.quota_signals import Learned

_LOADED = "quota:loaded"


@dataclass
class Cooldown:
    until: float
    why: str
    source: str = ""  # where the limit was learned: header ..., body, config, default


class Refused(str):
    """Why a model may not be called now (a str, as written on its seat), and for a full rpm
    window, in how many seconds a slot frees (None: not known, or not an rpm cap)."""

    frees_in: float | None = None


class Permit:
    """Held while a call is in flight; release it when the call ends."""

    def __init__(self, board: Board, slots: list[int], clock: Callable[[], float]) -> None:
        self._board, self._slots, self._clock = board, slots, clock

    def release(self) -> None:
        if self._slots:
            self._board.release(self._slots, self._clock())
            self._slots = []


class RateLimits:
    """Cooldowns and rpm/rpd caps on the board. (Panel sizes are routing's PanelLimits.)"""

    def __init__(
        self,
        config: Config,
        clock: Callable[[], float],
        board: Board,
        journal: list[list[Any]] | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.board = board
        # A shared live state (gateway/state) sends these changes on; None: the board is all.
        self.journal = journal
        self.used = board.used  # calls counted against a ring now (a shared state counts its own)
        self.zone = config.gateway.quota_day_tz
        self._model_caps = dict(config.model_rpm)
        self._connection_caps = {
            name: c.rpm for name, c in config.connections.items() if c.rpm is not None
        }
        self._model_rpd = dict(config.model_rpd)
        self._connection_rpd = {
            name: c.rpd for name, c in config.connections.items() if c.rpd is not None
        }
        self._connection_of = {m.alias: m.connection for m in config.catalog.models}

    # --- cooldowns ------------------------------------------------------------------------------

    def cooling(
        self, now: float | None = None, aliases: Iterable[str] | None = None
    ) -> dict[str, float]:
        """alias -> cooldown end, for every model cooling now (its daily cap spent included);
        *aliases*: only those models (a route turn asks about its collection's members)."""
        now = self.clock() if now is None else now
        found = {}
        today = quota_signals.day_of(now, self.zone)
        if aliases is None:
            aliases = (model.alias for model in self.config.catalog.models)
        with self.board.locked():
            for alias in aliases:
                until = self.board.numbers(_cool(alias))[0]
                if until > now:
                    found[alias] = until
                elif self._spent_today(alias, today) is not None:
                    found[alias] = quota_signals.boundary(now, self.zone)
        return found

    def cooldown_of(self, alias: str) -> Cooldown | None:
        now = self.clock()
        with self.board.locked():
            until = self.board.numbers(_cool(alias))[0]
            cooldown = None
            if until > now:
                source = self.board.text(_source(alias))
                cooldown = Cooldown(until, self.board.text(_cool(alias)), source)
            spent = self._spent_today(alias, quota_signals.day_of(now, self.zone))
        return self.longer(cooldown, spent, now)

    def retry_after(self, aliases: Iterable[str]) -> int:
        """Whole seconds until the first of *aliases* cools down (at least 1): the `Retry-After`
        of a request every one of them refused."""
        ends = [self.cooldown_of(alias) for alias in aliases]
        now = self.clock()
        wait = min((c.until for c in ends if c is not None), default=now + 1)
        return max(1, math.ceil(wait - now))

    def longer(self, cooldown: Cooldown | None, spent: str | None, now: float) -> Cooldown | None:
        """A model's cooldown, or its spent daily cap (why) cooling it to the day's end, if
        that ends later."""
        if spent is not None:
            end = quota_signals.boundary(now, self.zone)
            if cooldown is None or cooldown.until < end:
                return Cooldown(end, spent, "config")
        return cooldown

    def cool(
        self,
        alias: str,
        retry_after: float | None,
        why: str,
        *,
        until: float | None = None,
        capped: bool = True,
        source: str = "",
    ) -> float:
        """Cool a model (or its whole connection, if marked cool_together); return the end.
        *until* (absolute) wins over *retry_after*; neither: `cooldown_default_s`. Only a
        *capped* wait is shortened to `cooldown_max_s` (a stated daily reset is not)."""
        settings = self.config.gateway
        now = self.clock()
        if until is None:
            wait = settings.cooldown_default_s if retry_after is None else retry_after
            until = now + max(wait, 0.0)
            source = source or ("default" if retry_after is None else "header")
        if capped:
            until = min(until, now + settings.cooldown_max_s)
        model = self.config.catalog.model(alias)
        targets = [alias]
        connection = self.config.connections.get(model.connection) if model else None
        if model is not None and connection is not None and connection.cool_together:
            shared = model.connection
            targets = [m.alias for m in self.config.catalog.models if m.connection == shared]
        texts = {t: why if t == alias else f"{why} (via {alias})" for t in targets}
        with self.board.locked():
            for target, text in texts.items():
                if self.board.numbers(_cool(target))[0] < until:
                    self.board.write(_cool(target), until, text=text)
                    self.board.write(_source(target), 0.0, text=source)
        if self.journal is not None:
            cells = [[_cool(t), _source(t), until, text, source] for t, text in texts.items()]
            self.journal.append(["cool", cells])
        return until

    def learn(self, alias: str, learned: Learned) -> float:
        """Cool a model as a provider said (gateway/state/quota_signals.py), believed up to
        its bound (`quota_signals.believed`: past it, capped, and the cooldown's why says so,
        as does the learned limit kept in the records)."""
        settings = self.config.gateway
        learned = quota_signals.believed(learned, self.clock(), self.zone, settings.cooldown_max_s)
        return self.cool(
            alias, None, learned.why, until=learned.until, capped=learned.capped,
            source=learned.source,
        )  # fmt: skip

    def heard(self, alias: str, headers: Mapping[str, str]) -> Learned | None:
        """A success's headers: nothing remaining cools the model until the reset, before any
        429; a low count marks it scarce (explorer chairs go to others first) until the reset."""
        if not headers:
            return None
        now = self.clock()
        stated = quota_signals.read_headers(headers, now)
        if stated.remaining is None:
            return None
        reset = stated.requests_reset
        figures = (0.0, 0.0)
        if quota_signals.scarce(stated):
            figures = (float(stated.remaining), reset[1] if reset else now + WINDOW_S)
        self.board.write(_scarce(alias), *figures)
        if self.journal is not None:
            self.journal.append(["set", _scarce(alias), *figures, ""])
        learned = quota_signals.after_success(headers, now, self.config.gateway.cooldown_default_s)
        if learned is not None:
            self.learn(alias, learned)
        return learned

    def scarce(self, now: float | None = None) -> frozenset[str]:
        """Models whose provider said few requests remain, until that window resets."""
        now = self.clock() if now is None else now
        with self.board.locked():
            return frozenset(
                m.alias
                for m in self.config.catalog.models
                if self.board.numbers(_scarce(m.alias))[1] > now
            )

    # --- caps -----------------------------------------------------------------------------------

    def acquire(self, alias: str) -> Permit | Refused:
        """A permit to call `alias` now, or the reason it may not be called. A permit counts
        the call against the day's rpd counts."""
        now = self.clock()
        rings = self.rings_of(alias)
        with self.board.locked():
            cooldown = self.cooldown_of(alias)
            if cooldown is not None:
                return cooling_for(cooldown, now)
            taken = self.board.take(rings, now) if rings else []
            if not isinstance(taken, str):
                today = float(quota_signals.day_of(now, self.zone))
                cells = self.day_cells(alias)
                for cell in cells:
                    self._count(cell, today)
                if self.journal is not None:  # counted here while Redis is away: it adds them
                    self.journal.append(["count", cells, today])
        if isinstance(taken, str):
            return self.over(alias, taken, self.board.oldest(taken, dict(rings)[taken], now), now)
        return Permit(self.board, taken, self.clock)

    def rings_of(self, alias: str) -> list[tuple[str, int]]:
        """The rpm windows a call of *alias* takes a slot in: (name, cap)."""
        connection = self._connection_of.get(alias)
        rings: list[tuple[str, int]] = []
        if alias in self._model_caps:
            rings.append((f"model:{alias}", self._model_caps[alias]))
        if connection is not None and connection in self._connection_caps:
            rings.append((f"connection:{connection}", self._connection_caps[connection]))
        return rings

    def day_cells(self, alias: str) -> list[str]:
        """The day counts a call of *alias* adds one to."""
        connection = self._connection_of.get(alias)
        cells = [_day(f"model:{alias}")]
        return cells if connection is None else [*cells, _day(f"connection:{connection}")]

    def over(self, alias: str, ring: str, oldest: float | None, now: float) -> Refused:
        """Refused: *ring* is full; a slot frees once its *oldest* call is a minute old."""
        cap = dict(self.rings_of(alias))[ring]
        connection = self._connection_of.get(alias)
        where = "the model" if ring.startswith("model:") else f"the connection {connection}"
        refused = Refused(f"over its rpm cap ({cap}/min on {where})")
        if oldest is not None and oldest + WINDOW_S > now:
            refused.frees_in = oldest + WINDOW_S - now
        return refused

    def rpm_use(self, alias: str) -> int | None:
        cap = self._model_caps.get(alias)
        return self.used(f"model:{alias}", cap, self.clock()) if cap is not None else None

    def rpd_of(self, alias: str) -> int | None:
        return self._model_rpd.get(alias)

    def used_today(self, alias: str) -> int:
        return self._today(_day(f"model:{alias}"), quota_signals.day_of(self.clock(), self.zone))

    def _spent_today(self, alias: str, today: int) -> str | None:
        """Why the model's daily cap (or its connection's) is spent, or None."""
        for cell, cap, why in self.day_caps(alias):
            if self._today(cell, today) >= cap:
                return why
        return None

    def day_caps(self, alias: str) -> list[tuple[str, int, str]]:
        """(day count, rpd cap, why when spent) for the model and its connection."""
        caps = []
        cap = self._model_rpd.get(alias)
        if cap is not None:
            why = f"daily cap spent ({cap}/day on the model, rpd in the config)"
            caps.append((_day(f"model:{alias}"), cap, why))
        connection = self._connection_of.get(alias)
        cap = self._connection_rpd.get(connection) if connection else None
        if cap is not None:
            why = f"daily cap spent ({cap}/day on the connection {connection}, rpd in the config)"
            caps.append((_day(f"connection:{connection}"), cap, why))
        return caps

    def _today(self, cell: str, today: int) -> int:
        count, day = self.board.numbers(cell)
        return int(count) if int(day) == today else 0

    def _count(self, cell: str, today: float, by: int = 1) -> None:
        count, day = self.board.numbers(cell)
        self.board.write(cell, (count if day == today else 0.0) + by, today)

    # --- a restart keeps what was learned -------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self.board.numbers(_LOADED)[0] == 1.0

    def load(
        self, day_counts: Iterable[Mapping[str, Any]], limits: Iterable[Mapping[str, Any]]
    ) -> None:
        """Today's counts (calls started today, from the records) and the cooldowns still
        running, unless another worker already loaded them."""
        now = self.clock()
        today = float(quota_signals.day_of(now, self.zone))
        with self.board.locked():
            if self.loaded:
                return
            for row in day_counts:
                if row["alias"] in self._connection_of:
                    self._count(_day(f"model:{row['alias']}"), today, int(row["calls"]))
                    self._count(_day(f"connection:{row['connection']}"), today, int(row["calls"]))
            for row in limits:
                if row["alias"] in self._connection_of and row["until"] > now:
                    until, why = self._kept(row, now)
                    self.board.write(_cool(row["alias"]), until, text=why)
                    self.board.write(_source(row["alias"]), 0.0, text=row["source"])
            self.board.write(_LOADED, 1.0)

    def _kept(self, row: Mapping[str, Any], now: float) -> tuple[float, str]:
        """A cooldown kept across a restart, held to the longest any rule allows (one learned
        before the bounds, as a reset in the year 2286, included)."""
        longest = max(
            now + self.config.gateway.cooldown_max_s,
            quota_signals.boundary(now, self.zone, "month") + quota_signals.GRACE_S,
        )
        if row["until"] <= longest:
            return row["until"], row["why"]
        stated = quota_signals.moment(row["until"])
        return longest, f"{row['why']}; capped: the kept end ({stated}) is past any bound"

    def connection_use(self, name: str) -> tuple[int, int] | None:
        """(calls in the last 60 s or in flight, cap) on a capped connection; None: no cap."""
        cap = self._connection_caps.get(name)
        if cap is None:
            return None
        return self.used(f"connection:{name}", cap, self.clock()), cap


def cooling_for(cooldown: Cooldown, now: float) -> Refused:
    return Refused(f"cooling for {cooldown.until - now:.1f} s more ({cooldown.why})")


def capped_rings(config: Config) -> list[tuple[str, int]]:
    """Every rpm window the config caps: (name, cap)."""
    rings = [(f"model:{alias}", cap) for alias, cap in config.model_rpm.items()]
    rings += [(f"connection:{n}", c.rpm) for n, c in config.connections.items() if c.rpm]
    return rings


def cool_cell(alias: str) -> str:
    return _cool(alias)


def _cool(alias: str) -> str:
    return f"cool:{alias}"


def _source(alias: str) -> str:
    return f"cool-source:{alias}"


def _scarce(alias: str) -> str:
    return f"scarce:{alias}"  # (remaining, until the window resets)


def _day(name: str) -> str:
    return f"day:{name}"  # (calls started on the day, the day's ordinal)

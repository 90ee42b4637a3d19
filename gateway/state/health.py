"""Every model's health (contract §18) on the board, so every worker seats by the same.

Why cells on the board: a model benched in one worker must not be called by the next panel in
another, nor on another replica; the board is what the workers share, and with Redis each cell
written here is sent on as a `set` (the journal, gateway/state/redis_state.py) and mirrored onto
every replica's board, as cooldowns are. A record is four cells, its numbers exact:

- `health:A`        (health code, since)          why
- `health-trial:A`  (next_trial, backoff)         last failure's class
- `health-count:A`  (transient in a row, first gone/paywalled failure)  its class
- `health-times:A`  (last failure's time, last answer's time)           "hand" if retired by hand

The rules themselves are routing/health.py's; the store keeps what changed (the learner writes
it), and `load` puts it back on a fresh board.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gateway.board import Board
from gateway.store.health_rows import COLUMNS
from routing.health import BENCHED, OK, RETIRED, Record

_CODES = {OK: 0.0, BENCHED: 1.0, RETIRED: 2.0}
_HEALTHS = {code: health for health, code in _CODES.items()}
_NONE = -1.0  # a time not set (the gateway's clock is never below zero)
_LOADED = "health-loaded"


def _time(value: float | None) -> float:
    return _NONE if value is None else value


def _maybe(value: float) -> float | None:
    return None if value == _NONE else value


class ModelHealth:
    """Each model's health record, read and written on the board."""

    def __init__(
        self,
        board: Board,
        aliases: Iterable[str],
        clock: Callable[[], float],
        journal: list[list[Any]] | None = None,
    ) -> None:
        self.board, self.clock, self.journal = board, clock, journal
        self.aliases = tuple(aliases)

    def of(self, alias: str) -> Record:
        """*alias*'s record; ok for a model never written."""
        board = self.board
        with board.locked():
            code, since = board.numbers(f"health:{alias}")
            if (code, since) == (0.0, 0.0):  # never written (a written time is -1 or a time)
                return Record()
            why = board.text(f"health:{alias}") or None
            next_trial, backoff = board.numbers(f"health-trial:{alias}")
            last = board.text(f"health-trial:{alias}") or None
            transient, first_gone = board.numbers(f"health-count:{alias}")
            gone_class = board.text(f"health-count:{alias}") or None
            failed_at, answered_at = board.numbers(f"health-times:{alias}")
            hand = board.text(f"health-times:{alias}") == "hand"
        return Record(
            _HEALTHS.get(code, OK), why, _maybe(since), _maybe(next_trial), int(transient),
            _maybe(first_gone), gone_class, backoff, last, _maybe(failed_at),
            _maybe(answered_at), hand,
        )  # fmt: skip

    def benched(self, alias: str) -> bool:
        """Is *alias* benched? One cell, for the seating path."""
        return self.board.numbers(f"health:{alias}")[0] == _CODES[BENCHED]

    def put(self, alias: str, record: Record) -> None:
        """Write *alias*'s record (and send it on, with a shared live state)."""
        cells = [
            (f"health:{alias}", _CODES[record.health], _time(record.since), record.why or ""),
            (
                f"health-trial:{alias}",
                _time(record.next_trial),
                record.backoff,
                record.last_failure or "",
            ),
            (
                f"health-count:{alias}",
                float(record.transient),
                _time(record.first_gone),
                record.gone_class or "",
            ),
            (
                f"health-times:{alias}",
                _time(record.failed_at),
                _time(record.answered_at),
                "hand" if record.by_hand else "",
            ),
        ]
        with self.board.locked():
            for name, a, b, text in cells:
                self.board.write(name, a, b, text=text)
        if self.journal is not None:
            self.journal.extend(["set", name, a, b, text] for name, a, b, text in cells)

    def all(self) -> dict[str, Record]:
        return {alias: self.of(alias) for alias in self.aliases}

    def unseatable(self, now: float | None = None) -> dict[str, Record]:
        """alias -> record, for every model not to be called now (benched before its trial,
        or retired)."""
        now = self.clock() if now is None else now
        found = {}
        for alias, record in self.all().items():
            if record.health != OK and not record.seatable(now):
                found[alias] = record
        return found

    # --- a restart keeps what was learned -------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self.board.numbers(_LOADED)[0] == 1.0

    def load(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """The records kept in the store, unless another worker already loaded them."""
        with self.board.locked():
            if self.loaded:
                return
            for row in rows:
                if row["alias"] in self.aliases:
                    self.put(row["alias"], record_of(row))
            self.board.write(_LOADED, 1.0)


# a model's record: the stored columns (gateway/store/health_rows.py) less its alias and when
# it last changed
FIELDS = COLUMNS[1:-1]


def row_of(alias: str, record: Record) -> dict[str, Any]:
    """A record as the store keeps it."""
    row: dict[str, Any] = {"alias": alias}
    row.update({name: getattr(record, name) for name in FIELDS})
    row["by_hand"] = int(record.by_hand)
    return row


def record_of(row: Mapping[str, Any]) -> Record:
    values = {name: row[name] for name in FIELDS if name in row}
    values["by_hand"] = bool(values.get("by_hand"))
    values["transient"] = int(values.get("transient") or 0)
    values["backoff"] = float(values.get("backoff") or 0.0)
    return Record(**values)

"""The live figures routing reads: when each model last sat, how it did, what verdicts it earned.

Loaded from the records when the gateway starts, then kept current as panels are seated, seats
finish and verdicts arrive, so choosing a panel never reads the store. The figures live on the
board (gateway/board.py), so every worker reads the same ones; seating is marked under the
board's lock in the same step that chose the panel, which is what makes concurrent panels rotate,
in one worker or across several.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypedDict

from gateway.board import Board
from routing import Evidence, Standing
from routing.evidence import DECAY, recent_after, recent_from_totals, wilson
from routing.prior import PRIOR_WEIGHT, SuiteScore

_LOADED, _LATEST = "ledger:loaded", "ledger:latest"
LATEST = _LATEST  # the time of the latest seating (a shared state marks seats with it too)


class ModelFigures(TypedDict):
    """One model's live figures, as /bench/models shows them."""

    seated: int
    answered: int
    useful: int
    judged: int
    blind_useful: int  # of `useful` and `judged`, those given before the seat's model was shown
    blind_judged: int
    # Wilson's interval of the useful rate that routing ranks by: its recent weights (each
    # verdict a little less than the next), summed over the shapes
    useful_interval: list[float]
    last_seated: float | None


class Figures:
    def __init__(
        self,
        board: Board,
        aliases: Iterable[str],
        shapes: Iterable[str],
        journal: list[list[Any]] | None = None,
        prior_weight: float = PRIOR_WEIGHT,
    ) -> None:
        self.board = board
        # pseudo-verdicts a suite score counts as in the evidence (contract §20 suite.prior_weight)
        self.prior_weight = prior_weight
        self.aliases = tuple(aliases)
        self.shapes = frozenset(shapes)
        # A shared live state (gateway/state) sends these changes on; None: the board is all.
        self.journal = journal
        # alias -> why it is not to be called now (benched or retired: gateway/request/
        # learn_health.py), read by every seating
        self.unwell: Callable[[], Mapping[str, str]] = dict
        # the models a provider's listing lacks: not explored (gateway/state/listings.py)
        self.unlisted: Callable[[], frozenset[str]] = frozenset
        # a benched model seated for its trial (a route turn: panels seat none): the trial
        # taken, so the next turn does not call it again meanwhile (gateway/state/learn_health.py)
        self.trying: Callable[[str, float], None] = lambda alias, now: None

    @property
    def loaded(self) -> bool:
        return self.board.numbers(_LOADED)[0] == 1.0

    def load(self, standings: dict[str, Any], windows: dict[str, int]) -> None:
        """Take the figures from the records, unless another worker already has. (Only models and
        shapes the config still names: routing asks about no others, and the board is sized for
        the config.)"""
        board = self.board
        known = set(self.aliases)
        with board.locked():
            if self.loaded:
                return
            latest = 0.0
            for row in standings.get("seats", ()):
                last = row["last_seated"]
                latest = max(latest, last or 0.0)
                if row["alias"] not in known:
                    continue
                board.write(_seated(row["alias"]), row["seated"] or 0, last or 0.0)
                board.write(_answered(row["alias"]), row["answered"] or 0)
            board.write(_LATEST, latest)
            for row in standings.get("verdicts", ()):
                if row["alias"] not in known:
                    continue
                useful, judged = row["useful"] or 0, row["judged"] or 0
                if row["shape"] in self.shapes:
                    board.add(_verdicts(row["alias"], row["shape"]), useful, judged)
                    recent = _recent(row["alias"], row["shape"])
                    board.write(
                        recent,
                        *recent_from_totals(
                            *map(int, board.numbers(_verdicts(row["alias"], row["shape"])))
                        ),
                    )
                board.add(_verdicts(row["alias"]), useful, judged)
                blind = (row.get("blind_useful") or 0, row.get("blind_judged") or 0)
                board.add(_blind(row["alias"]), *blind)
            for alias, window in windows.items():
                if alias in known:
                    board.write(_window(alias), window)
            board.write(_LOADED, 1.0)

    def seated(self, alias: str, now: float) -> float:
        """Mark a model seated; times are made strictly increasing so the order of seating is kept
        even when the clock has not moved between two panels."""
        if self.journal is not None:
            self.journal.append(seated_op([alias], now))
        return self.mark(alias, now)

    def mark(self, alias: str, now: float) -> float:
        """`seated` on the board alone (a shared state sends the mark itself)."""
        with self.board.locked():
            at = max(now, self.board.numbers(_LATEST)[0] + 1e-6)
            self.board.write(_LATEST, at)
            self.board.write(_seated(alias), self.board.numbers(_seated(alias))[0] + 1, at)
            self.trying(alias, now)
        return at

    def learn_suite(self, alias: str, shape: str, accuracy: float, answered: int) -> None:
        """A model's suite figures on a shape (contract §20), where routing can read them: its
        accuracy and how many answers it rests on (gateway/suite/service.py `publish`)."""
        name = _suite(alias, shape)
        with self.board.locked():
            self.board.write(name, accuracy, float(answered))
        if self.journal is not None:
            self.journal.append(["set", name, accuracy, float(answered), ""])

    def suite_on(self, alias: str, shape: str) -> tuple[float, int] | None:
        """(accuracy, answered) of *alias*'s suite answers on *shape*; None before any."""
        with self.board.locked():
            accuracy, answered = self.board.numbers(_suite(alias, shape))
        return (accuracy, int(answered)) if answered else None

    def learn_window(self, alias: str, window: int) -> bool:
        """Remember a provider's stated context window; it only ever goes down."""
        if self.journal is not None:
            self.journal.append(["lower", _window(alias), window])
        with self.board.locked():
            known = self.board.numbers(_window(alias))[0]
            if known and known <= window:
                return False
            self.board.write(_window(alias), window)
        return True

    def useful_on(self, alias: str, shape: str) -> int:
        return int(self.board.numbers(_verdicts(alias, shape))[0])

    def answered(self, alias: str) -> None:
        self.board.add(_answered(alias), 1)
        if self.journal is not None:
            self.journal.append(["add", _answered(alias), 1, 0])

    def verdict(
        self,
        alias: str,
        shape: str,
        useful: bool,
        previous: bool | None,
        blind: tuple[bool, bool] = (False, False),
    ) -> None:
        """Count a verdict, replacing the call's previous one (None: it had none). The recent
        figures weigh a new verdict fully and older ones a little less each time; a replaced
        verdict is corrected where it stands. *blind*: whether this verdict and the one it
        replaces were given blind (they are counted apart too; routing reads them alike)."""
        useful_change = (1 if useful else 0) - (1 if previous else 0)
        judged_change = 1 if previous is None else 0
        now_blind, was_blind = blind[0], blind[1] and previous is not None
        blind_change = (
            (1 if now_blind and useful else 0) - (1 if was_blind and previous else 0),
            int(now_blind) - int(was_blind),
        )
        if blind_change != (0, 0):
            self.board.add(_blind(alias), *blind_change)
            if self.journal is not None:
                self.journal.append(["add", _blind(alias), *blind_change])
        if self.journal is not None:
            cells = [_verdicts(alias, shape), _verdicts(alias), _recent(alias, shape)]
            replaced = previous is not None
            self.journal.append(
                ["verdict", *cells, useful_change, judged_change, useful, replaced, DECAY]
            )
        with self.board.locked():
            for cell in (_verdicts(alias, shape), _verdicts(alias)):
                self.board.add(cell, useful_change, judged_change)
            recent = self.board.numbers(_recent(alias, shape))
            if previous is None:
                self.board.write(_recent(alias, shape), *recent_after(recent, useful))
            else:
                fixed = min(max(recent[0] + useful_change, 0.0), recent[1])
                self.board.write(_recent(alias, shape), fixed, recent[1])

    def evidence(
        self,
        cooling: dict[str, float],
        shape: str,
        scarce: frozenset[str] = frozenset(),
        aliases: Iterable[str] | None = None,
    ) -> Evidence:
        """Every model's standing (or only *aliases*'), with its verdicts and suite score on
        *shape* (the one routing asks about); *scarce*: models whose provider said few requests
        remain."""
        standings = {}
        suite: dict[str, Mapping[str, SuiteScore]] = {}
        unwell, unlisted = self.unwell(), self.unlisted()
        with self.board.locked():
            for alias in self.aliases if aliases is None else aliases:
                seated, last = self.board.numbers(_seated(alias))
                useful, judged = self.board.numbers(_verdicts(alias, shape))
                recent = self.board.numbers(_recent(alias, shape))
                window = self.board.numbers(_window(alias))[0]
                standings[alias] = Standing(
                    last_seated=last if seated else None,
                    seated=int(seated),
                    useful=MappingProxyType({shape: int(useful)}),
                    judged=MappingProxyType({shape: int(judged)}),
                    cooling_until=cooling.get(alias),
                    window=int(window) if window else None,
                    recent=MappingProxyType({shape: recent}),
                    scarce=alias in scarce,
                    unwell=unwell.get(alias),
                    unlisted=alias in unlisted,
                )
                accuracy, answered = self.board.numbers(_suite(alias, shape))
                if answered:  # its suite score, counted as pseudo-verdicts (routing/prior.py)
                    suite[alias] = MappingProxyType({shape: (accuracy, int(answered))})
        return Evidence(MappingProxyType(standings), MappingProxyType(suite), self.prior_weight)

    def row(self, alias: str) -> ModelFigures:
        with self.board.locked():
            seated, last = self.board.numbers(_seated(alias))
            useful, judged = self.board.numbers(_verdicts(alias))
            blind_useful, blind_judged = self.board.numbers(_blind(alias))
            answered = self.board.numbers(_answered(alias))[0]
            recent = [self.board.numbers(_recent(alias, shape)) for shape in self.shapes]
        interval = wilson(sum(r[0] for r in recent), sum(r[1] for r in recent))
        return {
            "seated": int(seated),
            "answered": int(answered),
            "useful": int(useful),
            "judged": int(judged),
            "blind_useful": int(blind_useful),
            "blind_judged": int(blind_judged),
            "useful_interval": list(interval),
            "last_seated": float(last) if seated else None,
        }


def seated_op(aliases: list[str], now: float) -> list[Any]:
    """The shared state's operation for `seated` (gateway/state/live.lua)."""
    return ["seated", _LATEST, [_seated(a) for a in aliases], now]


def seated_cell(alias: str) -> str:
    return _seated(alias)


def _seated(alias: str) -> str:
    return f"seated:{alias}"  # (count, last seated)


def _answered(alias: str) -> str:
    return f"answered:{alias}"


def _verdicts(alias: str, shape: str | None = None) -> str:
    """(useful, judged) on one shape, or on every shape together. (Aliases and shapes may hold
    any printable character, so a control character keeps the two apart.)"""
    return f"verdicts:{alias}" if shape is None else f"verdicts:{alias}\x1f{shape}"


def _blind(alias: str) -> str:
    """(useful, judged) of the verdicts on every shape given blind."""
    return f"blind:{alias}"


def _recent(alias: str, shape: str) -> str:
    """(useful, judged) on one shape, each verdict weighing a little less than the next."""
    return f"recent:{alias}\x1f{shape}"


def _suite(alias: str, shape: str) -> str:
    return f"suite:{alias}\x1f{shape}"


def _window(alias: str) -> str:
    return f"window:{alias}"

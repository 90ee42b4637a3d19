"""Choosing a panel: who sits, who waits in reserve, who was passed over and why.

A gateway that always asks the models with the best record never learns anything new about the
others: they are not asked, so they earn no verdicts, so they are not asked. Explorer chairs break
that loop by going to the eligible models that have gone longest without a seat (in-flight panels
count, so concurrent panels rotate through different models). Everything here is pure: the same
(ask, catalog, evidence, now) always gives the same panel.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

from routing.catalog import ROUTER_PANEL, Catalog, Model
from routing.challenger import suite_challenger
from routing.evidence import Evidence
from routing.refusals import (
    NothingToSeat,
    PromptTooLarge,
    UnknownAlias,
    UnknownCollection,
    UnknownShape,
    closest,
    did_you_mean,
    echo,
)
from routing.windows import window_of

CANNOT_SEE = "cannot see images (role vision or the fact vision: true)"


@dataclass(frozen=True)
class PanelRequest:
    """The request facts routing needs. `collection` is ROUTER_PANEL for the router's panel."""

    collection: str
    shape: str
    nominees: tuple[str, ...] = ()
    prompt_tokens: int = 0
    seed: int = 0  # salt for fair tie-breaks between equally stale models
    images: bool = False  # the messages carry images: only models that can see may sit


@dataclass(frozen=True)
class Seat:
    name: str
    alias: str
    replaces: str | None = None


@dataclass(frozen=True)
class Skipped:
    alias: str
    why: str
    seat: str | None = None


@dataclass(frozen=True)
class Panel:
    seats: tuple[Seat, ...]
    reserves: tuple[str, ...]  # ready to take over a seat, best first
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def reserves_used(self) -> int:
        return sum(1 for seat in self.seats if seat.replaces is not None)


class _Table:
    """The state of one seating: who is seated, which families and connections are taken."""

    def __init__(self, ask: PanelRequest, catalog: Catalog, evidence: Evidence, now: float) -> None:
        self.ask, self.catalog, self.evidence, self.now = ask, catalog, evidence, now
        roles = catalog.roles_for(ask.shape)
        if roles is None:
            known = ", ".join(catalog.shape_names)
            hint = did_you_mean(ask.shape, catalog.shape_names, "{!r}")
            raise UnknownShape(
                f"Unknown panel shape {echo(ask.shape)!r}{hint or ';'} Known shapes: {known}."
            )
        self.roles = roles
        self.seats: list[Seat] = []
        self.aliases: set[str] = set()
        self.families: set[str] = set()
        self.connections: set[str] = set()
        self.skipped: list[Skipped] = []
        self.notes: list[str] = []

    def sit(self, name: str, model: Model, replaces: str | None = None) -> None:
        self.seats.append(Seat(name, model.alias, replaces))
        self.aliases.add(model.alias)
        self.families.add(model.family)
        self.connections.add(model.connection)

    def window(self, model: Model) -> int | None:
        return window_of(model, self.evidence)

    def fits(self, model: Model) -> bool:
        window = self.window(model)
        return window is None or self.ask.prompt_tokens <= window

    def too_small(self, model: Model) -> str:
        return (
            f"context window {self.window(model)} tokens cannot hold the prompt "
            f"(~{self.ask.prompt_tokens} tokens)"
        )

    def blind(self, model: Model) -> bool:
        """The request carries images this model cannot see."""
        return self.ask.images and not model.sees

    def cooling(self, model: Model) -> bool:
        return self.evidence.of(model.alias).cooling(self.now)

    def unwell(self, model: Model) -> str | None:
        """Why a benched or retired model is not called (contract §18); None: it may be."""
        return self.evidence.of(model.alias).unwell

    def eligible(self, model: Model) -> bool:
        """May this model be seated unasked (as explorer, reserve, router seat)?"""
        return (
            not model.ad_hoc
            and model.role in self.roles
            and model.alias not in self.aliases
            and model.family not in self.families
            and not self.cooling(model)
            and not self.unwell(model)
            and self.fits(model)
            and not self.blind(model)
        )

    def pool(self) -> list[Model]:
        return [m for m in self.catalog.models if self.eligible(m)]

    def staleness(self, model: Model) -> tuple[float, int, int]:
        """Sort key: never seated first, then longest since seated, fewest seats, fair salt."""
        standing = self.evidence.of(model.alias)
        last = standing.last_seated if standing.last_seated is not None else float("-inf")
        salt = zlib.crc32(f"{self.ask.seed}:{model.alias}".encode())
        return (last, standing.seated, salt)

    def merit(self, model: Model) -> tuple[float, bool]:
        """How sure we are the model is useful on the shape: the lower bound of its recent useful
        rate (so a long good record beats one lucky verdict), then the preferred connection."""
        return (self.evidence.bounds_on(model.alias, self.ask.shape)[0], model.preferred)

    def promise(self, model: Model) -> float:
        """How good the model could still turn out to be: the upper bound of its recent rate."""
        return self.evidence.bounds_on(model.alias, self.ask.shape)[1]

    def stalest(self, candidates: list[Model]) -> Model | None:
        return min(candidates, key=self.staleness, default=None)


def choose_panel(ask: PanelRequest, catalog: Catalog, evidence: Evidence, now: float) -> Panel:
    """Seat a panel for `ask`, or raise a routing Refusal saying why nobody can sit."""
    table = _Table(ask, catalog, evidence, now)
    nominees = _known_nominees(ask, catalog)
    if ask.collection == ROUTER_PANEL:
        chairs = _seat_router(table)
    else:
        chairs = _seat_members(table)
    _seat_explorers(table, nominees, chairs)
    reserves = _pick_reserves(table)
    if not table.seats:
        if ask.images:
            raise NothingToSeat(
                "No model that can see images can be seated for this request: give models "
                "role vision (or the fact vision: true), or ask without images."
            )
        raise NothingToSeat(
            "No model can be seated for this request: every candidate is cooling, benched, "
            "too small for the prompt, or not admitted by the shape."
        )
    return Panel(
        tuple(table.seats),
        tuple(model.alias for model in reserves),
        tuple(table.skipped),
        tuple(table.notes),
    )


def _known_nominees(ask: PanelRequest, catalog: Catalog) -> list[Model]:
    unknown = [alias for alias in ask.nominees if catalog.model(alias) is None]
    if unknown:
        aliases = [m.alias for m in catalog.models]
        asked = ", ".join(_with_hint(echo(a), closest(a, aliases)) for a in unknown)
        raise UnknownAlias(f"Unknown model alias(es) {asked}; known: {', '.join(aliases)}.")
    seen: dict[str, Model] = {}
    for alias in ask.nominees:
        model = catalog.model(alias)
        if model is not None:  # always: unknown aliases were refused above
            seen.setdefault(alias, model)
    return list(seen.values())


def _with_hint(name: str, close: str | None) -> str:
    return f"{name} (did you mean {close}?)" if close else name


def _seat_members(table: _Table) -> int:
    """Seat the collection's members in order; return how many explorer chairs remain."""
    catalog, ask = table.catalog, table.ask
    collection = catalog.collection(ask.collection)
    if collection is None:
        lines = "; ".join(
            f"bench/{c.name}: {c.description}" if c.description else f"bench/{c.name}"
            for c in catalog.collections
        )
        names = [c.name for c in catalog.collections]
        hint = did_you_mean(ask.collection, names, "bench/{}")
        raise UnknownCollection(
            f"Unknown collection {echo(ask.collection)!r}{hint or '.'} Collections: {lines}; "
            f"or bench/{ROUTER_PANEL}."
        )
    limits = catalog.limits
    too_small = []
    unseated = []  # in seat order: too small, or blind to the request's images
    for i, alias in enumerate(collection.members, start=1):
        model = catalog.model(alias)
        assert model is not None  # the config validator guarantees members exist
        unwell = table.unwell(model)
        if unwell:
            unseated.append(f"member{i}")
            table.skipped.append(Skipped(alias, unwell, f"member{i}"))
        elif table.blind(model):
            unseated.append(f"member{i}")
            table.skipped.append(Skipped(alias, CANNOT_SEE, f"member{i}"))
        elif table.fits(model):
            table.sit(f"member{i}", model)
        else:
            too_small.append(f"member{i}")
            unseated.append(f"member{i}")
            table.skipped.append(Skipped(alias, table.too_small(model), f"member{i}"))
    if collection.members and len(too_small) == len(collection.members):
        raise PromptTooLarge(
            f"The prompt (~{ask.prompt_tokens} tokens) fits no member of {collection.name}: "
            + "; ".join(f"{s.alias}: {s.why}" for s in table.skipped)
        )
    for seat_name in unseated:
        _replace_at_seating(table, seat_name)
    return max(0, limits.max_calls - len(collection.members))


def _replace_at_seating(table: _Table, seat_name: str) -> None:
    """A member that cannot be called gets a reserve in its seat before anything is sent."""
    candidates = _rank_reserves(table) if table.catalog.limits.reserves else []
    if not candidates:
        table.notes.append(f"no reserve could take {seat_name}'s seat")
        return
    number = sum(1 for s in table.seats if s.replaces is not None) + 1
    table.sit(f"reserve{number}", candidates[0], replaces=seat_name)


def _seat_router(table: _Table) -> int:
    """The router's panel: the model surest to be useful on the shape, then a second opinion."""
    limits = table.catalog.limits
    pool = table.pool()
    if not pool:
        return 0
    shape = table.ask.shape
    proven = [m for m in pool if table.evidence.proven_on(m.alias, shape)]
    primary: Model | None
    if proven:
        primary = max(proven, key=lambda m: (table.merit(m), _neg(table.staleness(m))))
        primary = (
            suite_challenger(table.evidence, table.ask.shape, proven, primary, table.staleness)
            or primary
        )
    else:
        primary = table.stalest(pool)
    assert primary is not None
    table.sit("primary", primary)
    if limits.max_calls >= 2:
        second = _second_opinion(table, primary)
        if second is not None:
            table.sit("second", second)
    return max(0, limits.max_calls - len(table.seats))


def _neg(key: tuple[float, int, int]) -> tuple[float, int, int]:
    return (-key[0], -key[1], -key[2])


def _second_opinion(table: _Table, primary: Model) -> Model | None:
    """Another family, on another connection where one exists, from the close contenders: judged
    or suite-scored models that could still be better than the primary (their upper bound reaches
    its lower one). The most promising sits; judging it narrows its bound, so the chair rotates
    among them, and a strong newcomer gets the verdicts it needs to take the primary's chair. No
    contender (no evidence yet): the stalest."""
    shape = table.ask.shape
    pool = table.pool()
    if not pool:
        return None
    bar = table.merit(primary)[0]
    contenders = [
        m for m in pool if table.evidence.known_on(m.alias, shape) and table.promise(m) >= bar
    ]
    elsewhere = [m for m in contenders if m.connection != primary.connection]
    if contenders:
        return max(
            elsewhere or contenders, key=lambda m: (table.promise(m), _neg(table.staleness(m)))
        )
    elsewhere = [m for m in pool if m.connection != primary.connection]
    return table.stalest(elsewhere or pool)


def _seat_explorers(table: _Table, nominees: list[Model], chairs: int) -> None:
    """Nominees take explorer chairs first; the stalest eligible models take the rest."""
    limits = table.catalog.limits
    explorers = min(limits.max_explorers, chairs)
    number = 0
    for model in nominees:
        why = _nominee_blocked(table, model, number, chairs)
        if why:
            table.skipped.append(Skipped(model.alias, why))
            continue
        if model.ad_hoc:
            table.notes.append(f"{model.alias} is ad hoc; seated because it was named")
        elif model.role not in table.roles:
            table.notes.append(
                f"{model.alias} (role {model.role}) is not admitted by shape {table.ask.shape}; "
                "seated because it was named"
            )
        if model.family in table.families:
            table.notes.append(f"{model.alias} shares family {model.family} with a seated model")
        number += 1
        table.sit(f"explorer{number}", model)
    while number < explorers:  # (a model no listing names is never explored: contract §19)
        listed = [m for m in table.pool() if not table.evidence.of(m.alias).unlisted]
        plenty = [m for m in listed if not table.evidence.of(m.alias).scarce]
        stalest = table.stalest(plenty) or table.stalest(listed)
        if stalest is None:
            break
        number += 1
        table.sit(f"explorer{number}", stalest)


def _nominee_blocked(table: _Table, model: Model, taken: int, chairs: int) -> str | None:
    if model.alias in table.aliases:
        return "already seated on this panel"
    unwell = table.unwell(model)
    if unwell:
        return unwell
    cooling_left = table.evidence.of(model.alias).cooling_left(table.now)
    if cooling_left > 0:
        return f"cooling after a rate limit for {cooling_left:.0f} s more"
    if not table.fits(model):
        return table.too_small(model)
    if table.blind(model):
        return CANNOT_SEE
    if taken >= chairs:
        return f"no chair left (max_calls is {table.catalog.limits.max_calls})"
    return None


def _rank_reserves(table: _Table) -> list[Model]:
    """Surest to be useful on the shape, then stalest; connections no seat uses come first."""
    pool = table.pool()
    pool.sort(key=table.staleness)
    pool.sort(key=lambda m: table.merit(m)[0], reverse=True)
    pool.sort(key=lambda m: m.connection in table.connections)
    return pool


def _pick_reserves(table: _Table) -> list[Model]:
    """Reserves in rank order, one per family."""
    reserves: list[Model] = []
    families: set[str] = set()
    for model in _rank_reserves(table):
        if len(reserves) >= table.catalog.limits.reserves:
            break
        if model.family not in families:
            families.add(model.family)
            reserves.append(model)
    return reserves


@dataclass(frozen=True)
class Choice:
    """A panel to choose once the evidence is in: what the live state calls inside its seating
    step (one step under the board's lock, or one Redis round trip), so that choosing and marking
    the seats happen together. *notes* go before the panel's own (a vision panel's shape)."""

    wanted: PanelRequest
    catalog: Catalog
    now: float
    notes: tuple[str, ...] = ()

    def __call__(self, evidence: Evidence) -> Panel:
        plan = choose_panel(self.wanted, self.catalog, evidence, self.now)
        return replace(plan, notes=self.notes + plan.notes) if self.notes else plan

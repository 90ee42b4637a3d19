"""What every request shares: config, record store, live figures, limits, the clock, the way out.

Built once per app by the factory; nothing here is module-level state. The live figures and the
limits sit on the board, which the workers of one gateway share (gateway/board.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from gateway.access.keys import Keys
from gateway.access.secrets import MIN_ERROR_LENGTH, Mask
from gateway.access.throttle import CELLS as SIGN_IN_CELLS
from gateway.board import Board
from gateway.config.settings import Config
from gateway.health import Health
from gateway.request.body import BodyReader
from gateway.state.admission import Admission
from gateway.state.conversations import Conversations
from gateway.state.figures import Figures
from gateway.state.health import ModelHealth
from gateway.state.learn import Learning
from gateway.state.learn_health import HealthKeeper
from gateway.state.limits import RateLimits
from gateway.state.listings import ListingFacts
from gateway.state.live import LiveState
from gateway.state.local import LocalState
from gateway.store.interface import RecordStore
from routing.health import Rules

if TYPE_CHECKING:  # (the seam imports litellm: a `serve` supervisor sizing the board need not)
    from gateway.upstream.seam import Upstream


@dataclass
class Runtime:
    config: Config
    store: RecordStore
    upstream: Upstream  # the way out to the providers (gateway/upstream/seam.py)
    clock: Callable[[], float] = time.time
    board: Board | None = None  # None: one of its own, sized for the config
    figures: Figures = field(init=False)
    rate_limits: RateLimits = field(init=False)
    model_health: HealthKeeper = field(init=False)  # benched and retired models (contract §18)
    listings: ListingFacts = field(init=False)  # what the providers' listings say (§19)
    learning: Learning = field(init=False)  # what every call's outcome teaches (gateway/request)
    conversations: Conversations = field(init=False)  # route mode's
    keys: Keys = field(init=False)
    live: LiveState = field(init=False)  # the board, or Redis mirrored on it (gateway/state)
    admission: Admission = field(init=False)  # this worker's panels and seat calls in flight
    bodies: BodyReader = field(init=False)  # heavy request bodies are read in a child process
    panels: set[asyncio.Task[object]] = field(default_factory=set)  # running, awaited on shutdown
    ready: bool = False
    health: Health = field(default_factory=Health)  # what /healthz says once ready
    secrets: Mask = field(init=False)  # the providers' secrets, masked wherever text goes out
    error_secrets: Mask = field(init=False)  # and shorter ones too, in upstream errors

    def __post_init__(self) -> None:
        self.secrets = Mask(self.config.secrets)
        self.error_secrets = Mask(self.config.secrets, least=MIN_ERROR_LENGTH)
        shared = self.config.state is not None
        if self.board is None or shared:  # with Redis, each worker mirrors it on its own board
            self.board = Board.private(*board_size(self.config))
        journal: list[list[Any]] | None = [] if shared else None  # changes Redis has yet to get
        catalog = self.config.catalog
        aliases = [m.alias for m in catalog.models]
        shapes = [name for name, _ in catalog.shapes]
        self.figures = Figures(self.board, aliases, shapes, journal, self.config.suite.prior_weight)
        self.rate_limits = RateLimits(self.config, self.clock, self.board, journal)
        self.conversations = Conversations(self.board, self.clock, journal)
        lifecycle = self.config.lifecycle
        rules = Rules(
            lifecycle.failures_to_bench, lifecycle.backoff_min_s, lifecycle.backoff_max_s,
            lifecycle.confirm_after_s, lifecycle.reprobe_s, lifecycle.auto_retire,
        )  # fmt: skip
        book = ModelHealth(self.board, aliases, self.clock, journal)
        self.model_health = HealthKeeper(book, rules, catalog, self.store, self.clock)
        self.figures.unwell = self.model_health.panel_unwell  # panels skip benched and retired
        self.listings = ListingFacts(self.board, aliases, self.clock, journal)
        self.figures.unlisted = self.listings.unlisted  # explorers skip what no listing names
        self.figures.trying = self.model_health.take_trial  # a route turn's trial, taken once
        self.learning = Learning(
            self.rate_limits, self.figures, self.store, self.scrub_error, self.model_health
        )
        settings = self.config.gateway
        self.admission = Admission(
            settings.max_panels_in_flight, settings.max_seats_in_flight, self.store.room
        )
        self.keys = Keys(self.store, self.config.gateway.require_keys, self.board, self.clock)
        if journal is None:
            self.live = LocalState(self.board, self.figures, self.rate_limits, self.conversations)
        else:
            from gateway.state.redis_state import RedisState  # (redis is imported only if used)

            parts = (self.figures, self.rate_limits, self.conversations, self.keys)
            self.live = RedisState(self.config, self.clock, self.board, parts, journal, self.health)
        self.bodies = BodyReader(self.config.gateway)

    @overload
    def scrub(self, text: str) -> str: ...
    @overload
    def scrub(self, text: None) -> None: ...
    def scrub(self, text: str | None) -> str | None:
        """Keep the providers' secrets out of anything written or shown: each masked as `…`
        and its last four characters (gateway/access/secrets.py)."""
        return self.secrets.text(text)

    def scrub_error(self, text: str | None) -> str | None:
        """An upstream's error message, masked of every secret of 4 characters or more (the
        key a provider says it was sent may be a short one)."""
        return self.error_secrets.text(text)


def board_size(config: Config) -> tuple[int, int]:
    """(cells, slots) for what the gateway keeps on its board: a few cells per model and shape,
    a ring slot per unit of every rpm cap, room for the keys' rings, and the table of wrong
    admin tokens (gateway/access/throttle.py)."""
    models, shapes = len(config.catalog.models), len(config.catalog.shapes)
    cells = 4096 + 1024 + SIGN_IN_CELLS + models * (16 + shapes) + 2 * len(config.connections)
    caps = sum(config.model_rpm.values()) + sum(c.rpm or 0 for c in config.connections.values())
    return cells, 65536 + caps


GROWTH = 4  # how much larger a reloaded config may be than the one a gateway started with


def board_room(config: Config) -> tuple[int, int]:
    """What a `serve` gateway's board is made with: room for a reloaded config up to `GROWTH`
    times this one's size (more models, shapes, rpm caps). Pages never written take no memory
    (an anonymous mapping, or a sparse file in /dev/shm), so the room is nearly free."""
    cells, slots = board_size(config)
    return cells * GROWTH, slots * GROWTH


def board_fits(board: Board, config: Config) -> str | None:
    """None if *config* can run on *board* (a local state's, kept across a reload), else why
    not, for the reload's refusal."""
    if config.state is not None:
        return None  # with Redis each app mirrors it on a board of its own, sized anew
    cells, slots = board_size(config)
    if cells <= board.cells and slots <= board.slots:
        return None
    return (
        f"the config needs a live-state board of {cells} cells and {slots} rpm slots, and this "
        f"gateway's holds {board.cells} and {board.slots} (sized at start for a config up to "
        f"{GROWTH} times the one it started with): restart the gateway to take it"
    )

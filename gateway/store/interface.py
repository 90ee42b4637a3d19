"""What the gateway asks of a record store, and what a panel's and a seat's rows hold.

SQLite implements it (gateway/store/sqlite/store.py); another backend (PostgreSQL, for several
replicas) implements the same methods.
"""

from __future__ import annotations

from typing import Any, Protocol

PANEL_FIELDS = (
    "id",
    "created",
    "requested_model",
    "collection",
    "shape",
    "shape_by",
    "prompt",
    "key_name",
    "skipped",
    "notes",
    "reserves",
)
CALL_FIELDS = (
    "id",
    "panel_id",
    "seat",
    "alias",
    "model",
    "connection",
    "shape",
    "status",
    "error",
    "error_class",
    "seconds",
    "first_token_s",
    "tokens_in",
    "tokens_out",
    "answer",
    "replaces",
    "replaced_by",
    "started",
    "finished",
    "failed_over",  # route mode: the members that failed the turn before this one answered
    "dropped",  # what of the request this model could not be given (X-Bench-Dropped)
    "failure",  # a failed call's class (gateway/request/failure.py); None: answered, or older
)


class RecordStore(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    # None while new panels may be seated; else why not (records waiting past their bound)
    def room(self) -> str | None: ...
    async def add_panel(self, panel: dict[str, Any]) -> None: ...
    async def add_call(self, call: dict[str, Any]) -> None: ...
    # owner: the key name the panel must carry, else the record is treated as unknown (None: any)
    async def record_verdict(
        self, verdict: dict[str, Any], owner: str | None = None
    ) -> tuple[bool, dict[str, Any] | None] | None: ...
    async def panel(self, panel_id: str, owner: str | None = None) -> dict[str, Any] | None: ...
    async def call(self, call_id: str, owner: str | None = None) -> dict[str, Any] | None: ...
    # pending, judged or unanswered per known call (another owner's call is left out, unknown)
    async def verdict_states(
        self, call_ids: list[str], owner: str | None = None
    ) -> dict[str, str]: ...
    # the newest answered, unjudged seats: {call, panel, seat, alias, collection, finished}
    async def owed(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]: ...
    # a page of panels, newest first, with their seats, and the count of owed verdicts
    async def panels_page(
        self, limit: int, before: str | None = None, owed: bool = False, owner: str | None = None
    ) -> dict[str, Any]: ...
    async def change_marker(self) -> tuple[int, int, int]: ...
    async def standings(self) -> dict[str, Any]: ...
    async def add_key(self, key: dict[str, Any]) -> bool: ...
    async def keys(self) -> list[dict[str, Any]]: ...
    async def key_by_digest(self, digest: str) -> dict[str, Any] | None: ...
    async def revoke_key(self, name: str) -> bool: ...
    async def touch_key(self, name: str, when: float) -> None: ...
    async def learn_window(self, alias: str, window: int) -> None: ...
    async def learned_windows(self) -> dict[str, int]: ...
    # quotas (contract §16): cooldowns learned from providers, and what was spent
    async def learn_limit(self, limit: dict[str, Any]) -> None: ...
    async def learned_limits(self, now: float) -> list[dict[str, Any]]: ...
    # model health (contract §18): a model's record and, when its health changed, the event
    async def keep_health(self, row: dict[str, Any], event: dict[str, Any] | None) -> None: ...
    async def health_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...
    async def day_counts(self, since: float) -> list[dict[str, Any]]: ...
    async def usage(
        self, start: float, end: float, time_zone: str, owner: str | None = None
    ) -> list[dict[str, Any]]: ...

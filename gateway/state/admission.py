"""Admission control: at most so many panels, and so many seat calls, in flight per worker.

Why: every panel in flight costs the event loop its seats' calls and replies and holds their
answers in memory; past some number, more panels only make every panel slower and leave health
checks and other clients waiting on a loop that never idles. Beyond `gateway.max_panels_in_flight`
panels, or `gateway.max_seats_in_flight` seat calls, a panel is refused with 503 and Retry-After
before anyone is seated: no record, no call. A refused client retries later; an admitted one is
served at the pace of a loop that still answers.

A panel holds its ticket from admission until its run ends (a client that hangs up does not end
it early: its seats still run). It first holds room for `gateway.max_calls` seats, the most it
can seat, then only for the seats it was given.
"""

from __future__ import annotations

from collections.abc import Callable

from gateway.errors import Overloaded, RecordsBacklogged

RETRY_AFTER_S = 1
BACKLOG_RETRY_AFTER_S = 5


class Ticket:
    """One admitted panel's hold on the worker's room; `release` is idempotent."""

    def __init__(self, admission: Admission, seats: int) -> None:
        self._admission = admission
        self.seats = seats
        self.released = False

    def resize(self, seats: int) -> None:
        """Hold room for *seats* seat calls instead (the panel's real size, once seated)."""
        if not self.released:
            self._admission.seats += seats - self.seats
            self.seats = seats

    def release(self, *_: object) -> None:
        if not self.released:
            self.released = True
            self._admission.panels -= 1
            self._admission.seats -= self.seats


class Admission:
    def __init__(
        self, max_panels: int, max_seats: int, room: Callable[[], str | None] = lambda: None
    ) -> None:
        """*room*: the record store's `room` (why it takes no new panels now, or None)."""
        self.max_panels = max_panels
        self.max_seats = max_seats
        self.room = room
        self.panels = 0  # admitted and not yet over
        self.seats = 0  # seat calls those panels may make at once

    def admit(self, seats: int) -> Ticket:
        """A ticket for a panel of up to *seats* seats, or Overloaded (503, Retry-After); or
        RecordsBacklogged (503) while the seat rows waiting for the store are at their bound:
        a panel admitted is always recorded, so new ones wait rather than a row be dropped."""
        backlog = self.room()
        if backlog is not None:
            raise RecordsBacklogged(
                f"New panels wait until the records catch up: {backlog}. Nobody was seated; "
                f"try again in {BACKLOG_RETRY_AFTER_S} s.",
                headers={"Retry-After": str(BACKLOG_RETRY_AFTER_S)},
            )
        if self.panels + 1 > self.max_panels:
            raise self._refusal(
                f"{self.panels} panels are in flight (the most is {self.max_panels})"
            )
        if self.seats + seats > self.max_seats:
            raise self._refusal(
                f"{self.seats} seat calls are in flight (the most is {self.max_seats})"
            )
        self.panels += 1
        self.seats += seats
        return Ticket(self, seats)

    @staticmethod
    def _refusal(why: str) -> Overloaded:
        return Overloaded(
            f"The gateway is at capacity: {why}. Nobody was seated; "
            f"try again in {RETRY_AFTER_S} s.",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )

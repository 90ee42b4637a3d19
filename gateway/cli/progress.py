"""The live view of `bench-gateway ask` on a terminal: each seat printed the moment it finishes,
under one line that keeps count (seats done of seats) and names the slowest still thinking.

Drawn with rich (its Live display redraws that one line in place and prints finished seats
above it), and only when the stream is a terminal: piped, nothing is drawn and the seat table at
the end is all there is.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

_MARKS = {"ok": ("✓", "green"), "empty": ("∅", "yellow"), "cooling": ("…", "yellow")}


class _StatusLine:
    """Rendered afresh on every refresh, so the slowest seat's time keeps counting."""

    def __init__(self, view: LiveSeats) -> None:
        self.view = view

    def __rich__(self) -> Text:
        view = self.view
        line = Text(f"{view.done}/{view.total} seats done", style="bold")
        if view.thinking:
            name, (alias, since) = min(view.thinking.items(), key=lambda item: item[1][1])
            line.append(f" · slowest still thinking: {name} ({alias}) ")
            line.append(f"{time.monotonic() - since:.1f} s", style="cyan")
        return line


class LiveSeats:
    def __init__(self, stream: TextIO) -> None:
        self.console = Console(file=stream, highlight=False)
        self.enabled = self.console.is_terminal
        self.total = 0
        self.done = 0
        self.thinking: dict[str, tuple[str, float]] = {}  # seat -> (alias, since)
        self.live: Live | None = None

    def __enter__(self) -> LiveSeats:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def seated(self, seats: list[dict[str, Any]]) -> None:
        """The panel is seated: every planned seat starts thinking."""
        now = time.monotonic()
        self.total = len(seats)
        self.thinking = {s["seat"]: (s["alias"], now) for s in seats}
        if self.enabled:
            self.live = Live(
                _StatusLine(self),
                console=self.console,
                refresh_per_second=4,
                transient=True,
            )
            self.live.start()

    def finished(self, seat: dict[str, Any]) -> None:
        """A seat finished: print it above the status line; a reserve taking over thinks on."""
        since = self.thinking.pop(seat["seat"], (seat["alias"], time.monotonic()))[1]
        if seat.get("replaced_by"):
            self.thinking[seat["replaced_by"]] = ("a reserve", since)
        else:
            self.done += 1
        if not self.enabled:
            return
        mark, style = _MARKS.get(seat["status"], ("✗", "red"))
        line = Text(f"{mark} ", style=style)
        line.append(f"{seat['seat']:<10} {seat['alias']:<14} {seat['status']:<12}")
        line.append(f"{seat['seconds']:>7.2f} s  ")
        line.append(seat["call"], style="dim")
        if seat.get("replaced_by"):
            line.append(f"  → {seat['replaced_by']}", style="yellow")
        self.console.print(line)

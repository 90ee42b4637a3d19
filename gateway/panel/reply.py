"""What every format's reply shows of a panel: the markdown of its seats and the `bench` field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.panel.fanout import SeatResult, SeatStatus
from routing import Panel

SEAT_FIELDS = (
    "seat",
    "alias",
    "connection",
    "status",
    "seconds",
    "answer",
    "error",
    "failure",
    "replaces",
    "replaced_by",
)


@dataclass(frozen=True)
class PanelFacts:
    panel_id: str
    requested_model: str
    collection: str
    shape: str
    shape_by: str
    plan: Panel
    created: float


def in_seat_order(plan: Panel, results: list[SeatResult]) -> list[SeatResult]:
    """Planned seats in order, each followed by the reserves that took it over."""
    by_replaced = {r.replaces: r for r in results if r.replaces is not None}
    by_seat = {r.seat: r for r in results}
    ordered: list[SeatResult] = []
    for seat in plan.seats:
        result = by_seat.get(seat.name)
        while result is not None:
            ordered.append(result)
            result = by_replaced.get(result.seat)
    return ordered


def seat_view(result: SeatResult) -> dict[str, Any]:
    view = {"call": result.id}
    view.update({name: getattr(result, name) for name in SEAT_FIELDS})
    return view


def skipped_view(plan: Panel) -> list[dict[str, Any]]:
    return [{"alias": s.alias, "seat": s.seat, "why": s.why} for s in plan.skipped]


def bench_field(facts: PanelFacts, seats: list[SeatResult]) -> dict[str, Any]:
    return {
        "panel": facts.panel_id,
        "collection": facts.collection,
        "shape": facts.shape,
        "shape_by": facts.shape_by,
        "seats": [seat_view(r) for r in seats],
        "skipped": skipped_view(facts.plan),
        "notes": list(facts.plan.notes),
    }


def header_line(facts: PanelFacts) -> str:
    return (
        f"**Panel** `{facts.panel_id}` · collection `{facts.collection}` · shape `{facts.shape}`\n"
    )


def section(result: SeatResult) -> str:
    """One seat's part of the markdown: a header, the call id and status, then the answer."""
    lines = [f"## {result.seat} — {result.alias}"]
    status = f"`{result.id}` · {result.status} · {result.seconds:.2f} s"
    if result.replaces:
        status += f" · replaces {result.replaces}"
    if result.replaced_by:
        status += f" · replaced by {result.replaced_by}"
    lines.append(status)
    lines.append("")
    if result.status == SeatStatus.OK:
        lines.append(result.answer or "")
    else:
        lines.append(f"> {result.error or result.status}")
    return "\n".join(lines) + "\n"


def content(facts: PanelFacts, seats: list[SeatResult]) -> str:
    """The panel's markdown: the answers first (in seat order), then the seats that failed, so a
    reader meets what was said before what went wrong."""
    ordered = sorted(seats, key=lambda r: r.status != SeatStatus.OK)  # (a stable sort)
    return "\n".join([header_line(facts), *(section(r) for r in ordered)])


def usage(seats: list[SeatResult]) -> dict[str, int]:
    prompt = sum(r.tokens_in or 0 for r in seats)
    completion = sum(r.tokens_out or 0 for r in seats)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def all_limited(seats: list[SeatResult]) -> bool:
    return bool(seats) and all(
        r.status in (SeatStatus.RATE_LIMITED, SeatStatus.COOLING) for r in seats
    )


def answered(seats: list[SeatResult]) -> bool:
    return any(r.status == SeatStatus.OK for r in seats)

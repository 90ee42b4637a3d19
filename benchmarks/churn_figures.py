"""The churn benchmark's figures, read from what each side recorded: its panels
(`GET /bench/panels`), its health events (the store), `GET /bench/health`, and the simulator's
request log (every call that reached a model, the gateway's own probes included).

Nothing here is a guess about what a gateway did: a seat counts when the gateway recorded it,
a probe when the simulator saw a call that no panel made, a chair as lost when the record shows
no answer in it (neither its own seat's nor a reserve's in its place).
"""

from __future__ import annotations

import json
from typing import Any

from churn_sides import PANEL_PROMPT, Clock
from churn_world import DAY, FATES, HOUR, Fate, served, window

PANEL_WORDS = PANEL_PROMPT.split("{n}")[1]


def _listed(value: Any) -> list[Any]:
    """A record's list field (stored as JSON text in the panel rows)."""
    if isinstance(value, str):
        value = json.loads(value or "[]")
    return list(value or [])


def lost_chairs(panel: dict[str, Any]) -> list[str]:
    """The aliases whose chairs ended with no answer: a member's or explorer's seat that did not
    answer and whose reserves (if any took it) did not either, or a skipped member's chair that
    no reserve took."""
    seats = {s["seat"]: s for s in panel["seats"]}
    chairs = {name: s["alias"] for name, s in seats.items() if not name.startswith("reserve")}
    chairs.update({s["seat"]: s["alias"] for s in _listed(panel.get("skipped")) if s.get("seat")})
    kept = set()
    for seat in seats.values():
        if seat["status"] != "ok":
            continue
        name = seat["seat"]
        while name in seats and seats[name].get("replaces"):
            name = seats[name]["replaces"]
        kept.add(name)
    return [alias for name, alias in chairs.items() if name not in kept]


def _is_panel_call(request: dict[str, Any]) -> bool:
    messages = (request.get("body") or {}).get("messages") or []
    last = messages[-1].get("content") if messages else ""
    return isinstance(last, str) and last.endswith(PANEL_WORDS)


class Month:
    """One side's month, its times on the simulator's clock."""

    def __init__(self, side: dict[str, Any], clock: Clock, days: float) -> None:
        self.clock, self.days, self.t0 = clock, days, side["t0"]
        self.panels = side["panels"]
        self.log = side["log"]
        self.events = side["events"]
        self.seats = [
            {
                **seat,
                "at": clock.sim(seat["started"]),
                "ended": clock.sim(seat["started"] + (seat["seconds"] or 0.0)),
            }
            for p in self.panels
            for seat in p["seats"]
        ]  # a seat starts before its call reaches the simulator, and ends after

    def at(self, panel: dict[str, Any]) -> float:
        return self.clock.sim(panel["created"])

    def ended(self, panel: dict[str, Any]) -> float:
        ends = [s["started"] + (s["seconds"] or 0.0) for s in panel["seats"]]
        return self.clock.sim(max(ends, default=panel["created"]))

    def span(self, fate: Fate) -> tuple[float, float] | None:
        found = window(fate, self.days)
        return None if found is None else (self.t0 + found[0], self.t0 + found[1])

    def calls(self, fate: Fate, start: float, end: float) -> list[dict[str, Any]]:
        name = served(fate.alias)
        return [r for r in self.log if r["model"] == name and start <= r["started"] < end]

    def failing(self, fate: Fate) -> dict[str, Any] | None:
        """Seats and probes spent on *fate*'s model from its first failed call until it came
        back (or the month ended)."""
        span = self.span(fate)
        if span is None:
            return None
        calls = self.calls(fate, *span)
        failed = [r["started"] for r in calls if (r["status"] or 0) >= 400]
        if not failed:
            return {"seats": 0, "probes": 0, "lost": 0, "first_failure": None}
        first = min(failed)
        seats = [
            s
            for s in self.seats
            if s["alias"] == fate.alias and first <= s["ended"] and s["at"] < span[1]
        ]
        probes = [r for r in calls if r["started"] >= first and not _is_panel_call(r)]
        lost = sum(
            fate.alias in lost_chairs(p) and first <= self.ended(p) and self.at(p) < span[1]
            for p in self.panels
        )
        return {
            "seats": len(seats),
            "probes": len(probes),
            "lost": lost,
            "first_failure_day": (first - self.t0) / DAY,
        }

    def back(self, fate: Fate) -> float | None:
        """Hours from the model's return until a panel seat of it answered (None: never)."""
        span = self.span(fate)
        if span is None or span[1] >= self.t0 + self.days * DAY:
            return None
        answered = [s["at"] for s in self.seats if s["alias"] == fate.alias and s["status"] == "ok"]
        after = [at for at in answered if at >= span[1]]
        return (min(after) - span[1]) / HOUR if after else None

    def false_retirements(self) -> list[dict[str, Any]]:
        """Retirements of a model that was not failing gone or paywalled at the time."""
        fates = {f.alias: f for f in FATES}
        wrong = []
        for event in self.events:
            if event["health"] != "retired":
                continue
            fate, at = fates.get(event["alias"]), self.clock.sim(event["at"])
            span = self.span(fate) if fate is not None else None
            if fate is None or not fate.retirable or span is None or not span[0] <= at < span[1]:
                wrong.append({**event, "day": (at - self.t0) / DAY})
        return wrong

    def restored(self, fate: Fate) -> float | None:
        """Hours from the model's return until the gateway said it was ok (an event)."""
        span = self.span(fate)
        if span is None:
            return None
        oks = [
            self.clock.sim(e["at"])
            for e in self.events
            if e["alias"] == fate.alias and e["health"] == "ok"
        ]
        after = [at for at in oks if at >= span[1]]
        return (min(after) - span[1]) / HOUR if after else None


def figures(side: dict[str, Any], clock: Clock, days: float) -> dict[str, Any]:
    """Everything the table shows for one side, and what it rests on."""
    month = Month(side, clock, days)
    lost = [lost_chairs(p) for p in month.panels]
    flaky = next(f for f in FATES if f.every is not None)
    flaky_seats = [s for s in month.seats if s["alias"] == flaky.alias]
    return {
        "panels": len(month.panels),
        "seats": len(month.seats),
        "answered": sum(s["status"] == "ok" for s in month.seats),
        "upstream_calls": len(month.log),
        "probes": sum(not _is_panel_call(r) for r in month.log),
        "panels_lost_a_chair": sum(bool(chairs) for chairs in lost),
        "chairs_lost": sum(len(chairs) for chairs in lost),
        "chairs_lost_by_model": _count(alias for chairs in lost for alias in chairs),
        "lost_on_days": _first_last(
            [
                (month.at(p) - month.t0) / DAY
                for p, chairs in zip(month.panels, lost, strict=True)
                if chairs
            ]
        ),
        "lost_examples": [
            _brief(p, month) for p, chairs in zip(month.panels, lost, strict=True) if chairs
        ][:12],
        "failing": {f.alias: month.failing(f) for f in FATES if month.span(f) is not None},
        "back_after_h": {f.alias: month.back(f) for f in FATES if f.back_on or f.lasts_s},
        "restored_after_h": {f.alias: month.restored(f) for f in FATES if f.back_on},
        "flaky": {
            "seats": len(flaky_seats),
            "failed": sum(s["status"] != "ok" for s in flaky_seats),
            "replaced": sum(bool(s.get("replaced_by")) for s in flaky_seats),
        },
        "false_retirements": month.false_retirements(),
        "retired_at_end": sorted(
            m["alias"]
            for m in (side.get("health") or {}).get("models", [])
            if m["health"] == "retired"
        ),
        "has_health": side.get("health") is not None,
        "late_panels": side.get("late", 0),
    }


def _brief(panel: dict[str, Any], month: Month) -> dict[str, Any]:
    """A panel that lost a chair, as the record has it: who sat where and how it ended."""
    return {
        "panel": panel["id"],
        "day": round((month.clock.sim(panel["created"]) - month.t0) / DAY, 3),
        "collection": panel.get("collection"),
        "seats": [
            f"{s['seat']}={s['alias']}:{s['status']}"
            + (f" (for {s['replaces']})" if s.get("replaces") else "")
            for s in panel["seats"]
        ],
        "skipped": [f"{s.get('seat')}={s.get('alias')}" for s in _listed(panel.get("skipped"))],
    }


def _first_last(days: list[float]) -> list[float]:
    """The first and last day something happened on (empty: never)."""
    return [round(days[0], 1), round(days[-1], 1)] if days else []


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))

"""The churn benchmark's table in docs/health.md, from its figures (docs/churn.json).

Kept apart from the run so the page can be redrawn from saved figures without running anything:
`python benchmarks/churn_report.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from churn_world import DAY, FATES, Fate, when
from evidence_report import goal_table

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = (("ours", "this gateway"), ("before", "before model health"))
START, END = "<!-- churn-table -->", "<!-- /churn-table -->"


def _when(fate: Fate, days: float) -> str:
    """The days (of this run's month) a model failed on, as the table names them."""
    start = when(fate.fails_on or 0, days) / DAY
    if fate.lasts_s is not None:
        return f"day {start:.3g}, for {fate.lasts_s / 3600:g} h"
    if fate.back_on is None:
        return f"from day {start:.3g}"
    return f"days {start:.3g} to {when(fate.back_on, days) / DAY:.3g}"


def _hours(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f} h"


def _days(days: list[float]) -> str:
    if not days:
        return ""
    first, last = days[0], days[-1]
    return f", on day {first:g}" if first == last else f", on days {first:g} to {last:g}"


def rows(results: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    """(measure, goal, {column: figure})."""
    days = results["run"]["days"]
    reprobe_h = results["run"]["lifecycle"]["reprobe_s"] / 3600
    out: list[tuple[str, str, dict[str, str]]] = []

    def add(measure: str, goal: str, cell: Any) -> None:
        out.append((measure, goal, {k: cell(results[k]) for k, _ in COLUMNS if k in results}))

    for fate in FATES:
        if not fate.dead:
            continue
        goal = "<= 1" if fate.status == 410 else "<= 2"
        add(
            f"{fate.alias}, {fate.what} {_when(fate, days)}: seats given to it (own calls)",
            goal,
            lambda r, a=fate.alias: f"{r['failing'][a]['seats']} ({r['failing'][a]['probes']})",
        )
    for fate in FATES:
        if fate.dead or fate.every is not None or fate.fails_on is None:
            continue
        add(
            f"{fate.alias}, {fate.what} {_when(fate, days)}: seats while it failed (own calls)",
            "",
            lambda r, a=fate.alias: f"{r['failing'][a]['seats']} ({r['failing'][a]['probes']})",
        )
    add(
        "flaky, 500 on one call in 5: failed seats / chairs handed on to a reserve",
        "all handed on",
        lambda r: f"{r['flaky']['failed']} / {r['flaky']['replaced']}",
    )
    add(
        "panels that lost a chair (chairs lost)",
        "0",
        lambda r: (
            f"{r['panels_lost_a_chair']} of {r['panels']} ({r['chairs_lost']})"
            + _days(r.get("lost_on_days") or [])
        ),
    )
    add(
        "false retirements",
        "0",
        lambda r: str(len(r["false_retirements"])) if r["has_health"] else "0 (never retires)",
    )
    for fate in FATES:
        if fate.back_on is not None or fate.lasts_s is not None:  # it comes back
            goal = f"<= {reprobe_h:g} h (one re-probe)" if fate.retirable else ""
            add(
                f"{fate.alias}: from its return to an answered seat",
                goal,
                lambda r, a=fate.alias: _hours(r["back_after_h"].get(a)),
            )
    add(
        "retired at the month's end",
        "the four dead",
        lambda r: ", ".join(r["retired_at_end"]) or "-" if r["has_health"] else "(no health)",
    )
    add(
        "seats / answered / calls that reached a model",
        "",
        lambda r: f"{r['seats']} / {r['answered']} / {r['upstream_calls']}",
    )
    return out


def table(results: dict[str, Any]) -> str:
    present = [(k, name) for k, name in COLUMNS if k in results]
    lines = goal_table(present, rows(results))
    run = results["run"]
    lines.append("")
    lines.append(
        f"A month of {run['days']:g} days, {run['per_day']:g} panels a day, time {run['speed']:g}"
        f" times the wall's ({run['seconds']:.0f} s for both sides, {run['when']}); before model "
        f"health: commit {run['baseline']}. Panels sent behind the month's clock (the machine "
        "busy): "
        + ", ".join(f"{name} {results[k].get('late_panels', 0)}" for k, name in present)
        + "."
    )
    return "\n".join(lines)


def render(results: dict[str, Any], page: Path) -> None:
    text = page.read_text() if page.exists() else ""
    block = f"{START}\n{table(results)}\n{END}"
    if START in text and END in text:
        text = text[: text.index(START)] + block + text[text.index(END) + len(END) :]
    else:
        text = text + ("\n" if text else "") + block + "\n"
    page.write_text(text)


if __name__ == "__main__":
    figures = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "churn.json"
    render(json.loads(figures.read_text()), ROOT / "docs" / "health.md")
    sys.exit(0)

"""The dashboard's Models and Limits sections: each model's evidence as `GET /bench/models` has
it, and the geometry of what draws it.

A useful rate alone says little on a personal bench (tens of verdicts, not thousands): "100 %
(4)" and "100 % (400)" are different news. So the page draws each rate inside the interval
routing ranks by (`useful_interval`, Wilson's), beside how many verdicts it rests on and how many
of those were given blind.
"""

from __future__ import annotations

from typing import Any

from gateway.records import standing as evidence
from gateway.runtime import Runtime

BAR_W = 200  # the chart's bars, in px
CELL_W = 80  # the interval drawn in a table cell, in px


def evidence_context(runtime: Runtime) -> dict[str, Any]:
    """What the page's Models, Limits and Collections sections show."""
    now = runtime.clock()
    models = evidence.model_rows(runtime)
    for row in models:
        row["useful_rate"] = evidence.useful_rate(row)
        until = row["cooling_until"]
        row["cooling_left"] = None if until is None else max(0.0, until - now)
        row["open_judged"] = row["judged"] - row["blind_judged"]
        row["interval_text"] = interval_text(row)
        row["cell"] = interval_geometry(row, CELL_W)
    return {
        "models": models,
        "chart": chart(models),
        "caps": evidence.model_caps(runtime),
        "connections": evidence.connection_rows(runtime),
        "collections": evidence.collection_rows(runtime),
    }


def interval_text(row: dict[str, Any]) -> str:
    """`75% (42-93%)`, or `no verdicts yet` before any verdict."""
    rate = row["useful_rate"]
    if rate is None:
        return "no verdicts yet"
    low, high = row["useful_interval"]
    return f"{rate:.0%} ({low * 100:.0f}-{high:.0%})"


def interval_geometry(row: dict[str, Any], width: int) -> dict[str, Any]:
    """Where, in a bar *width* wide, the interval starts and ends and the rate stands."""
    low, high = row["useful_interval"]
    rate = row["useful_rate"]
    return {
        "width": width,
        "low_x": round(width * low, 1),
        "span_w": round(width * (high - low), 1),
        "rate_x": None if rate is None else round(width * rate, 1),
        "known": rate is not None,
    }


def chart(models: list[dict[str, Any]]) -> dict[str, Any]:
    """Bar geometry for the SVG: per model, seats (scaled to the most seated), and its useful
    rate as a mark inside its interval."""
    row_h, label_w = 22, 110
    most = max((m["seated"] for m in models), default=0) or 1
    bars = []
    for i, m in enumerate(models):
        verdicts = "1 verdict" if m["judged"] == 1 else f"{m['judged']} verdicts"
        counted = f" · {verdicts}, {m['blind_judged']} blind" if m["judged"] else ""
        bars.append(
            {
                "alias": m["alias"],
                "y": 20 + i * row_h,
                "seats_w": round(BAR_W * m["seated"] / most, 1),
                "seats": m["seated"],
                "interval": interval_geometry(m, BAR_W),
                "label": m["interval_text"] + counted,
            }
        )
    width = label_w + BAR_W + 60 + BAR_W + 250
    return {
        "bars": bars,
        "width": width,
        "height": 30 + len(models) * row_h,
        "label_w": label_w,
        "bar_w": BAR_W,
        "rate_x": label_w + BAR_W + 60,
    }

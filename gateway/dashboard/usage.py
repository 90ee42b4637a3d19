"""The dashboard's Usage section: one month of the usage, summed per model, connection,
key and day, the months one may pick, and a bar of calls per day.

The figures come from `usage_body`, the function `GET /bench/usage` answers with, so the page
and the API cannot disagree. The dashboard is only ever open to `local` or the signed-in admin,
who see every key's panels, so it shows every key's usage too. The bar is drawn by the server
as SVG: the page loads no chart library and nothing from elsewhere.
"""

from __future__ import annotations

import calendar
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from gateway.records.usage import SUMMED, month_of, usage_body
from gateway.runtime import Runtime

MONTHS_BACK = 12  # the selector offers this month and the eleven before it
BY = ("alias", "connection", "key", "day")


async def usage_section(runtime: Runtime, month_text: str | None) -> dict[str, Any]:
    """The section's context: `GET /bench/usage`'s body plus sums per model, connection, key and
    day, today's sums per model (empty in another month), the month choices and the chart.
    A malformed *month_text* is the API's 400."""
    zone = runtime.config.gateway.quota_day_tz
    now = runtime.clock()
    year, month = month_of(month_text, now, zone)
    body = await usage_body(runtime.store, year, month, zone, owner=None)
    today = datetime.fromtimestamp(now, ZoneInfo(zone)).date().isoformat()
    return {
        **body,
        "today": today,
        "by": {name: sums_by(body["rows"], name) for name in BY},
        "today_by_model": sums_by([r for r in body["rows"] if r["day"] == today], "alias"),
        "months": month_choices(month_of(None, now, zone), (year, month)),
        "chart": day_chart(body["rows"], year, month),
    }


def sums_by(rows: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The usage rows summed over every column but *name* (model, connection, key or day)."""
    sums: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = sums.setdefault(row[name], {"name": row[name], **dict.fromkeys(SUMMED, 0)})
        for column in SUMMED:
            entry[column] += row[column] or 0
    return [sums[key] for key in sorted(sums)]


def month_choices(current: tuple[int, int], chosen: tuple[int, int]) -> list[str]:
    """This month and the ones before it, newest first; a chosen month outside them is added."""
    year, month = current
    months = []
    for _ in range(MONTHS_BACK):
        months.append(f"{year:04d}-{month:02d}")
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    shown = f"{chosen[0]:04d}-{chosen[1]:02d}"
    if shown not in months:
        months.append(shown)
        months.sort(reverse=True)
    return months


def day_chart(rows: list[dict[str, Any]], year: int, month: int) -> dict[str, Any]:
    """Bar geometry: one column per day of the month, its height the day's calls (scaled to the
    busiest day), the errors among them drawn over its foot."""
    col_w, gap, plot_h, top, left = 14, 3, 90, 16, 4
    per_day = {d["name"]: d for d in sums_by(rows, "day")}
    days = calendar.monthrange(year, month)[1]
    most = max((d["calls"] for d in per_day.values()), default=0)
    bars = []
    for number in range(1, days + 1):
        day = f"{year:04d}-{month:02d}-{number:02d}"
        found = per_day.get(day, {"calls": 0, "errors": 0})
        calls_h = round(plot_h * found["calls"] / most, 1) if most else 0.0
        errors_h = round(plot_h * found["errors"] / most, 1) if most else 0.0
        bars.append(
            {
                "day": day,
                "number": number,
                "calls": found["calls"],
                "errors": found["errors"],
                "x": left + (number - 1) * (col_w + gap),
                "calls_h": calls_h,
                "errors_h": errors_h,
                "labelled": number == 1 or number % 5 == 0,
            }
        )
    return {
        "bars": bars,
        "most": most,
        "col_w": col_w,
        "base": top + plot_h,
        "width": left + days * (col_w + gap),
        "height": top + plot_h + 16,
    }

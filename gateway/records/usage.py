"""The usage: calls, tokens in/out and errors per day, model, connection and key.

Why it is read from the calls, not kept beside them: every call is already a row (written when
its seat finishes), so a separate counter could only drift from the records; an index on the
calls' start time keeps a month's sums a range scan. A seat that was not called (`cooling`) spent
nothing and is not counted; days are calendar days in `gateway.quota_day_tz`, as rpd caps are.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from gateway.errors import BadRequest
from gateway.state import quota_signals
from gateway.store.interface import RecordStore

_MONTH = re.compile(r"([0-9]{4})-([0-9]{2})")
# the months read (the years whose months all end before the year 10000), as the document says
MONTH_PATTERN = (
    "^(19[7-9][0-9]|[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-(0[1-9]|1[0-2])$"
)
SUMMED = ("calls", "tokens_in", "tokens_out", "errors")


def month_of(text: str | None, now: float, time_zone: str) -> tuple[int, int]:
    """`YYYY-MM` as (year, month); none given: the current month in the quota zone."""
    if text is None:
        local = datetime.fromtimestamp(now, ZoneInfo(time_zone))
        return local.year, local.month
    found = _MONTH.fullmatch(text)
    if not found or not 1 <= int(found.group(2)) <= 12 or not 1970 <= int(found.group(1)) <= 9998:
        raise BadRequest(
            f"month must be YYYY-MM from 1970-01 to 9998-12 (e.g. 2025-03), got {text[:40]!r}.",
            param="month",
        )
    return int(found.group(1)), int(found.group(2))


async def usage_body(
    store: RecordStore, year: int, month: int, time_zone: str, owner: str | None
) -> dict[str, Any]:
    """GET /bench/usage: the rows per day, model, connection and key; sums per model and in all.
    *owner*: the key whose usage is shown (None: every key's)."""
    start, end = quota_signals.month_span(year, month, time_zone)
    rows = await store.usage(start, end, time_zone, owner)
    models: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = models.setdefault(row["alias"], {"alias": row["alias"], **dict.fromkeys(SUMMED, 0)})
        for name in SUMMED:
            entry[name] += row[name] or 0
    totals = {name: sum(row[name] or 0 for row in rows) for name in SUMMED}
    return {
        "month": f"{year:04d}-{month:02d}",
        "time_zone": time_zone,
        "rows": rows,
        "models": sorted(models.values(), key=lambda m: m["alias"]),
        "totals": totals,
    }


def usage_lines(body: dict[str, Any]) -> list[str]:
    """The usage page as a few lines of text, for `bench-gateway status`."""
    lines = [f"usage {body['month']} ({body['time_zone']})"]
    for entry in body["models"]:
        lines.append(
            f"  {entry['alias']:<24} {entry['calls']:>6} calls  {entry['tokens_in']:>9} in  "
            f"{entry['tokens_out']:>9} out  {entry['errors']:>5} errors"
        )
    t = body["totals"]
    lines.append(
        f"  {'all':<24} {t['calls']:>6} calls  {t['tokens_in']:>9} in  "
        f"{t['tokens_out']:>9} out  {t['errors']:>5} errors"
    )
    return lines

"""The dashboard's Usage section and the quota columns of its Models table, in a real headless
Chromium against a real gateway: what the page shows is what `GET /bench/usage` and
`GET /bench/models` say, for panels asked through the OpenAI SDK on two days of a month.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.access.sessions import ADMIN_TOKEN_ENV
from gateway.dashboard.usage import month_choices
from tests.helpers.bench import bench_raw, served
from tests.helpers.browser import WAIT_MS
from tests.helpers.clocks import ManualClock

# The dashboard tests' Chromium and watched page, shared rather than copied.

EVENING = datetime(2025, 3, 6, 22, 0, tzinfo=UTC).timestamp()
TODAY = "2025-03-07"  # after the clock crosses midnight


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(EVENING)


def _cells(row) -> dict[str, int]:
    return {name: int(row.locator(f".{name}").inner_text()) for name in CELLS}


CELLS = ("calls", "tokens-in", "tokens-out", "errors")


def _api(entry: dict) -> dict[str, int]:
    return {name: entry[name.replace("-", "_")] for name in CELLS}


def test_the_usage_section_shows_what_bench_usage_counts_per_model_and_day(
    make_gateway, watched, sim, clock
):
    raw = bench_raw(sim.url)
    raw["model_list"][0]["bench"]["rpd"] = 50  # alpha
    gw = make_gateway(raw, clock=clock.now)
    gw.ask("bench/trio", "Yesterday's question")
    gw.ask("bench/solo", "Another one from yesterday")
    clock.advance(3 * 3600)  # 01:00 on the 7th
    sim.set(served("gamma"), status=500)
    sim.set(served("delta"), status=429, headers={"Retry-After": "600"})
    for question in ("Is this loop right?", "And this one?"):
        gw.ask("bench/trio", question)
    gw.ask("bench/solo", "Name a prime.")
    usage = gw.http.get("/bench/usage").json()
    assert usage["month"] == "2025-03"
    models = gw.http.get("/bench/models").json()["models"]

    page = watched.page
    page.goto(gw.url + "/#usage")
    section = page.locator("#usage")
    assert section.get_attribute("data-month") == "2025-03"

    today = [r for r in usage["rows"] if r["day"] == TODAY]
    assert {r["alias"] for r in today} >= {"alpha", "gamma", "delta"}
    # gamma's two 500s and delta's one 429 (then delta cools: a seat not called is not counted)
    assert sum(r["errors"] for r in today) == 3
    for alias in {r["alias"] for r in today}:  # today's calls per model, shown as they come
        row = section.locator(f'table[data-by="today"] tr[data-name="{alias}"]')
        assert _cells(row) == {
            name: sum(r[name.replace("-", "_")] for r in today if r["alias"] == alias)
            for name in CELLS
        }
    assert section.locator('table[data-by="today"] tbody tr').count() == len(
        {r["alias"] for r in today}
    )
    section.locator("details summary").click()  # every row, per day, model, connection and key
    rows = page.locator("#usage-rows tbody tr")
    assert rows.count() == len(usage["rows"])
    for entry in today:
        row = page.locator(
            f'#usage-rows tr[data-day="{TODAY}"][data-alias="{entry["alias"]}"]'
            f'[data-connection="{entry["connection"]}"][data-key-name="{entry["key"]}"]'
        )
        assert _cells(row) == _api(entry)
    for entry in usage["models"]:  # the month's sums per model
        row = section.locator(f'table[data-by="model"] tr[data-name="{entry["alias"]}"]')
        assert _cells(row) == _api(entry)
    for day in ("2025-03-06", TODAY):
        calls = sum(r["calls"] for r in usage["rows"] if r["day"] == day)
        errors = sum(r["errors"] for r in usage["rows"] if r["day"] == day)
        bar = section.locator(f'svg.days g[data-day="{day}"]')
        assert (bar.get_attribute("data-calls"), bar.get_attribute("data-errors")) == (
            str(calls),
            str(errors),
        )
        assert (
            int(section.locator(f'table[data-by="day"] tr[data-name="{day}"] .calls').inner_text())
            == calls
        )
    assert section.locator("svg.days g.day").count() == 31
    assert section.locator('svg.days g[data-day="2025-03-08"]').get_attribute("data-calls") == "0"
    totals = usage["totals"]
    assert section.locator(".usage-totals").inner_text().startswith(f"{totals['calls']} calls")

    for m in models:  # rpd, used today and the cooling's source, as /bench/models has them
        row = page.locator(f'#models tr[data-model="{m["alias"]}"]')
        assert row.locator(".rpd").inner_text() == str(m["rpd"] or "-")
        assert row.locator(".used-today").inner_text() == str(m["used_today"])
        assert row.locator(".cooling-source").inner_text() == (m["cooling_source"] or "-")
        assert row.locator(".cooling-why").inner_text() == (m["cooling_why"] or "not cooling")
    alpha = next(m for m in models if m["alias"] == "alpha")
    assert alpha["rpd"] == 50 and alpha["used_today"] > 0
    delta = next(m for m in models if m["alias"] == "delta")
    assert delta["cooling_source"].startswith("header")  # its 429's Retry-After, shown above

    months = section.locator("select[name=month] option")
    assert months.first.get_attribute("value") == "2025-03"
    assert months.count() == 12 and months.last.get_attribute("value") == "2024-04"
    section.locator("select[name=month]").select_option("2025-02")  # submits on change
    page.wait_for_selector('#usage[data-month="2025-02"] #no-usage', timeout=WAIT_MS)
    assert page.evaluate("location.search") == "?month=2025-02"
    assert page.locator("#usage svg.days g.day").count() == 28
    assert gw.http.get("/bench/usage", params={"month": "2025-02"}).json()["rows"] == []
    watched.only_from(gw.url)


def test_a_month_the_page_cannot_mean_is_refused_in_the_apis_words(make_gateway):
    gw = make_gateway()
    shown = gw.http.get("/", params={"month": "March"})
    assert shown.status_code == 400
    assert (
        shown.json()["error"]["message"]
        == gw.http.get("/bench/usage", params={"month": "March"}).json()["error"]["message"]
    )


def test_without_the_admin_token_the_page_shows_no_usage(make_gateway, monkeypatch):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "admin-secret-for-the-test")
    gw = make_gateway(require_keys=True)
    for params in ({}, {"month": "2025-03"}, {"month": "March"}):  # refused before it is read
        shown = gw.http.get("/", params=params)
        assert shown.status_code == 401 and 'id="signin"' in shown.text
        assert 'id="usage"' not in shown.text


@pytest.mark.parametrize(
    ("current", "chosen", "first", "last", "count"),
    [
        ((2025, 3), (2025, 3), "2025-03", "2024-04", 12),
        ((2025, 12), (2025, 1), "2025-12", "2025-01", 12),
        ((2025, 3), (2023, 5), "2025-03", "2023-05", 13),  # an older month asked for by URL
        ((2025, 3), (2026, 1), "2026-01", "2024-04", 13),
    ],
)
def test_the_month_selector_offers_a_year_back_and_the_month_shown(
    current, chosen, first, last, count
):
    months = month_choices(current, chosen)
    assert (months[0], months[-1], len(months)) == (first, last, count)
    assert months == sorted(months, reverse=True) and len(set(months)) == count

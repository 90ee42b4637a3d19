"""The dashboard's Models table shows each model's suite figures (found of bugs, false alarms,
confidently wrong) as `GET /bench/models` has them, in a real headless Chromium."""

from __future__ import annotations

from gateway.suite.tasks import load
from tests.dashboard.conftest import browser, watched  # noqa: F401  (fixtures)
from tests.helpers.bench import served
from tests.suite.test_suite_drafts import judged_with_claims
from tests.suite.test_suite_runs import finished, run, suite_raw


def test_the_models_table_shows_the_suite_figures(
    make_gateway,
    watched,  # noqa: F811  (the dashboard's fixture)
    sim,
    tmp_path,
):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), answer="FAULT: line 2")
    finished(gw, run(gw, models=["alpha"], tasks=["t-mean-bug", "t-mean-control"]))
    page = watched.page
    page.goto(gw.url + "/#models")
    alpha = page.locator('#models tr[data-model="alpha"] .suite')
    assert alpha.inner_text() == "1/1 found · 1 false alarms · 1 confidently wrong"
    figures = gw.http.get("/bench/models").json()["models"]
    shown = {m["alias"]: m["suite"] for m in figures}
    assert shown["alpha"]["review"]["false_alarms"] == 1 and shown["gamma"] == {}
    assert page.locator('#models tr[data-model="gamma"] .suite').inner_text() == "-"
    watched.only_from(gw.url)


def test_the_dashboard_lists_drafts_and_its_buttons_approve_and_reject(
    make_gateway,
    watched,  # noqa: F811  (the dashboard's fixture)
    sim,
    tmp_path,
):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    judged_with_claims(gw)
    waiting = {d["claim"]: d["id"] for d in gw.http.get("/bench/suite/drafts").json()["drafts"]}
    page = watched.page
    page.goto(gw.url + "/#drafts")
    rows = page.locator("#drafts tr[data-draft]")
    assert rows.count() == 2
    real_row = f'#drafts tr[data-draft="{waiting["half(3) is 1"]}"]'
    false_row = f'#drafts tr[data-draft="{waiting["half(4) is 3"]}"]'
    real = page.locator(real_row)
    assert real.locator(".claim").inner_text() == "half(3) is 1"
    assert real.locator(".truth").inner_text() == "true"
    real.locator("button[data-action=approve]").click()
    page.wait_for_selector(f"{real_row}[data-state=approved]")
    page.locator(false_row).locator("button[data-action=reject]").click()
    page.wait_for_selector(f"{false_row}[data-state=rejected]")
    assert gw.http.get("/bench/suite/drafts").json()["drafts"] == []
    assert gw.http.get("/bench/suite").json()["tasks"] == len(load(tmp_path / "tasks")) + 1
    watched.only_from(gw.url)

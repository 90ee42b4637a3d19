"""The dashboard's Models table shows each model's suite figures (found of bugs, false alarms,
confidently wrong) as `GET /bench/models` has them, in a real headless Chromium."""

from __future__ import annotations

from tests.dashboard.conftest import browser, watched  # noqa: F401  (fixtures)
from tests.helpers.bench import served
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

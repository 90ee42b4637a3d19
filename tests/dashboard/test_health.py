"""Model health on the dashboard (contract §18), in a real Chromium against a real gateway whose
simulated members answer 401 and 404 "does not exist": the Models table shows each model's health
with its why and a benched model's next trial, a retired one plainly; an "action needed" banner
lists `GET /bench/health`'s actions word for word, and is not there when there are none; each
connection's health is beside its limits; the admin retires and restores a model from the
table, its posts carrying the page's CSRF token."""

from __future__ import annotations

import pytest

from gateway.access.sessions import ADMIN_TOKEN_ENV, CSRF_COOKIE
from tests.health.test_bench_keeps_itself import answers, duo_raw
from tests.helpers.bench import served
from tests.helpers.browser import WAIT_MS, screenshot
from tests.helpers.clocks import ManualClock, wait_until

ADMIN = "admin-token-for-the-health-tests"
NOT_THERE = "The model `gone` does not exist"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def health_raw(sim_url: str, **gateway) -> dict:
    raw = duo_raw(sim_url, **gateway)
    raw["collections"]["ones"] = {"members": ["alpha", "beta"]}
    return raw


def row(page, alias: str):
    return page.locator(f'#models tr[data-model="{alias}"]')


def banner(page) -> list[str]:
    return page.locator("#actions li").all_inner_texts()


def test_the_models_table_shows_health_with_its_why_and_the_banner_lists_the_actions(
    make_gateway, watched, sim, clock
):
    gw = make_gateway(health_raw(sim.url), clock=clock.now)
    page = watched.page
    page.goto(gw.url + "/")
    assert page.locator("#actions").count() == 0  # nothing to do: no banner
    assert set(page.locator("#models tr[data-model]").evaluate_all(
        "rows => rows.map(r => r.dataset.health)"
    )) == {"ok"}  # fmt: skip

    for alias in ("alpha", "beta"):
        sim.set(served(alias), **answers(401, "Unauthorized"))
    sim.set(served("gamma"), **answers(404, NOT_THERE))
    gw.ask("bench/ones")
    gw.ask("bench/duo")
    page.reload()
    refused = "the key for connection one was refused"
    assert banner(page) == gw.http.get("/bench/health").json()["actions"] == [refused]
    alpha = row(page, "alpha")
    assert alpha.get_attribute("data-health") == "benched"
    assert alpha.locator(".health-state").inner_text() == "benched · next trial in 5 s"
    assert alpha.locator(".health-why").inner_text() == refused
    gamma = row(page, "gamma")
    assert gamma.locator(".health-state").inner_text() == "benched · next trial in 5 s"
    why = gamma.locator(".health-why").inner_text()
    assert why.startswith("gone: ") and why.endswith(NOT_THERE)  # the provider's words
    assert row(page, "delta").locator(".health-state").inner_text() == "ok"
    assert row(page, "delta").locator(".health-why").count() == 0
    one = page.locator('#limits tr[data-connection="one"]')
    assert one.locator(".health-state").inner_text() == "check_key"
    assert one.locator(".health-why").inner_text() == refused
    assert page.locator('#limits tr[data-connection="two"]').get_attribute("data-health") == "ok"

    clock.advance(600)  # the confirming probe asks gamma again: still gone, so retired
    wait_until(lambda: gw.runtime.model_health.book.of("gamma").health == "retired")
    page.reload()
    gamma = row(page, "gamma")
    assert gamma.get_attribute("data-health") == "retired"
    assert gamma.locator(".health-state").inner_text().lower() == "retired"
    assert gamma.locator("button.restore").count() == 1
    actions = gw.http.get("/bench/health").json()["actions"]
    assert banner(page) == actions
    assert any(
        a.startswith("gamma is retired (gone: ")
        and a.endswith(f"{NOT_THERE}) but still named in bench/trio, bench/duo")
        for a in actions
    ), actions
    # alpha's trial came due in those 600 s: the gateway's probe took it, refused again
    wait_until(lambda: gw.runtime.model_health.book.of("alpha").backoff == 10)
    page.reload()
    assert (
        row(page, "alpha").locator(".health-state").inner_text() == "benched · next trial in 10 s"
    )
    screenshot(page, "dashboard-health.png")  # only when asked (BENCH_SCREENSHOTS)
    watched.only_from(gw.url)


def test_the_admin_retires_and_restores_a_model_from_the_models_table(
    make_gateway, watched, sim, monkeypatch
):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, ADMIN)
    gw = make_gateway(health_raw(sim.url, require_keys=True))
    page = watched.page
    page.goto(gw.url + "/")
    assert watched.errors == [  # the sign-in page is the gateway's 401
        "Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    ]
    watched.errors.clear()
    page.fill("input[name=token]", ADMIN)
    page.click("form#signin button")
    page.wait_for_selector("#models", timeout=WAIT_MS)
    assert page.url.startswith(gw.url + "/s/")  # a signed-in page, under its session's path

    delta = row(page, "delta")
    delta.locator("form.retire input[name=why]").fill("withdrawn upstream")
    delta.locator("form.retire button").click()
    page.wait_for_selector('tr[data-model="delta"][data-health="retired"]', timeout=WAIT_MS)
    record = gw.runtime.model_health.book.of("delta")
    assert (record.health, record.why, record.by_hand) == ("retired", "withdrawn upstream", True)
    assert row(page, "delta").locator(".health-why").inner_text() == "withdrawn upstream"
    assert banner(page) == ["delta is retired (withdrawn upstream) but still named in bench/trio"]

    row(page, "delta").locator("button.restore").click()
    page.wait_for_selector('tr[data-model="delta"][data-health="ok"]', timeout=WAIT_MS)
    assert gw.runtime.model_health.book.of("delta").health == "ok"
    assert page.locator("#actions").count() == 0
    assert page.locator("#model-error").inner_text() == ""
    watched.only_from(gw.url)


def test_a_retirement_posted_without_the_pages_csrf_token_changes_nothing(make_gateway, sim):
    gw = make_gateway(health_raw(sim.url))
    gw.http.get("/")  # the page sets its CSRF cookie
    token = gw.http.cookies[CSRF_COOKIE]
    refused = gw.http.post("/ui/models/alpha/retire", json={"why": "a page elsewhere said so"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf_failed"
    assert gw.http.post("/ui/models/alpha/restore", json={}).status_code == 403
    assert gw.runtime.model_health.book.of("alpha").health == "ok"
    unknown = gw.http.post(
        "/ui/models/nobody/retire", json={"why": "x"}, headers={"X-CSRF-Token": token}
    )
    assert unknown.status_code == 404
    taken = gw.http.post(
        "/ui/models/alpha/retire", json={"why": "withdrawn"}, headers={"X-CSRF-Token": token}
    )
    assert (taken.status_code, taken.json()["health"]) == (200, "retired")

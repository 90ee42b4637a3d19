"""The dashboard in a real headless Chromium (the system's `chromium`, driven by Playwright),
against a real gateway on loopback: panels asked through the OpenAI SDK show up, a click judges a
seat, an answer's markup never runs, nothing is fetched from elsewhere, and off loopback the page
asks for the admin token and refuses a gateway key.
"""

from __future__ import annotations

from gateway.access.sessions import ADMIN_TOKEN_ENV
from tests.helpers.browser import HOSTED, WAIT_MS, screenshot


def test_panels_appear_with_every_seat_and_one_click_records_the_verdict(make_gateway, watched):
    gw = make_gateway()
    first, _ = gw.ask("bench/trio", "Is this loop right?")
    second, _ = gw.ask("bench/solo", "Name a prime.")
    page = watched.page
    page.goto(gw.url + "/")
    panels = page.locator("[data-panel]")
    assert panels.first.get_attribute("data-panel") == second.bench["panel"]  # newest first
    for completion in (first, second):
        for seat in completion.bench["seats"]:
            chip = page.locator(f'[data-call="{seat["call"]}"]')
            assert chip.count() == 1
            assert seat["alias"] in chip.locator(".chip").inner_text()
    assert page.locator("#owed").inner_text() == str(
        sum(s["status"] == "ok" for c in (first, second) for s in c.bench["seats"])
    )

    call = first.bench["seats"][0]["call"]
    seat = page.locator(f'[data-call="{call}"]')
    seat.locator('[data-verdict="useful"]').click()
    page.wait_for_selector(f'[data-call="{call}"][data-judged="useful"]', timeout=WAIT_MS)
    assert gw.http.get(f"/bench/calls/{call}").json()["verdict"]["useful"] is True
    seat.locator("input[name=note]").fill("caught the off-by-one")
    seat.locator("form.note button").click()
    page.wait_for_function(
        "async (call) => (await (await fetch('/bench/calls/' + call)).json()).verdict.note",
        arg=call,
        timeout=WAIT_MS,
    )
    assert gw.http.get(f"/bench/calls/{call}").json()["verdict"]["note"] == "caught the off-by-one"

    page.reload()  # the Models section as it stands now, one verdict in
    other = first.bench["seats"][1]["call"]
    page.locator(f'[data-call="{other}"] button.open').click()
    screenshot(page, "dashboard.png")  # only when asked (BENCH_SCREENSHOTS)
    watched.only_from(gw.url)


def test_an_answers_markup_never_runs(make_gateway, watched, sim):
    hostile = (
        'Here: <script>window.pwned = "script"</script> and '
        "<img src=x onerror=\"window.pwned = 'img'\"> **bold** `code`"
    )
    sim.set("sim-alpha", answer=hostile)
    gw = make_gateway()
    completion, _ = gw.ask("bench/solo", "Say something risky.")
    call = completion.bench["seats"][0]["call"]
    page = watched.page
    page.goto(gw.url + "/")
    page.locator(f'[data-call="{call}"] button.open').click()
    answer = page.locator(f'[data-call="{call}"] .answer .md')
    assert "<script>" in answer.inner_text() and "onerror" in answer.inner_text()
    assert answer.locator("script, img").count() == 0
    assert answer.locator("strong").inner_text() == "bold"  # the safe markdown still renders
    page.wait_for_timeout(300)
    assert page.evaluate("typeof window.pwned") == "undefined"
    watched.only_from(gw.url)  # the img's src=x was never fetched


def test_a_new_panel_appears_without_a_reload(make_gateway, watched):
    gw = make_gateway()
    page = watched.page
    page.goto(gw.url + "/")
    page.wait_for_selector("#no-panels")
    page.wait_for_selector("#live.on", timeout=WAIT_MS)  # the event stream is open
    page.evaluate("window.sameDocument = true")
    completion, _ = gw.ask("bench/trio", "Anything new?")
    for seat in completion.bench["seats"]:
        page.wait_for_selector(f'[data-call="{seat["call"]}"]', timeout=WAIT_MS)
    assert page.evaluate("window.sameDocument") is True
    watched.only_from(gw.url)


def test_off_loopback_the_admin_token_signs_in_and_a_gateway_key_does_not(
    make_gateway, watched, monkeypatch
):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "admin-secret-for-the-test")
    gw = make_gateway(require_keys=True)
    page = watched.page
    page.goto(gw.url + "/")
    assert page.locator("form#signin").is_visible()
    assert page.locator("[data-panel]").count() == 0

    page.fill("input[name=token]", "admin-secret-for-the-test")
    page.click("form#signin button")
    page.wait_for_selector("#keys", timeout=WAIT_MS)
    page.fill("#new-key input[name=name]", "ci-script")
    page.click("#new-key button")
    page.wait_for_selector("#new-key-shown:not([hidden])", timeout=WAIT_MS)
    key = page.locator("#new-key-shown code").inner_text()
    assert key.startswith("bwk_")
    assert page.locator('[data-key="ci-script"]').count() == 1
    assert (
        gw.http.get("/bench/panels", headers={"Authorization": f"Bearer {key}"}).json()["panels"]
        == []
    )  # the key reads its own panels (none yet)

    page.click("#signout")
    page.wait_for_selector("form#signin", timeout=WAIT_MS)
    page.fill("input[name=token]", key)
    page.click("form#signin button")
    page.wait_for_selector("#signin-error:has-text('gateway key does not open')", timeout=WAIT_MS)
    assert page.locator("#keys").count() == 0
    assert watched.errors == [
        "Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    ] * len(watched.errors)
    watched.errors.clear()  # the refused sign-ins above are expected 401s
    page.goto(gw.url + "/")
    assert page.locator("form#signin").is_visible()
    shown = gw.http.get("/", headers={"Authorization": f"Bearer {key}"})
    assert shown.status_code == 401 and 'id="signin"' in shown.text


def test_reached_by_a_non_loopback_name_it_says_how_to_set_the_admin_token(
    make_gateway, watched, monkeypatch
):
    monkeypatch.delenv(ADMIN_TOKEN_ENV, raising=False)
    gw = make_gateway(allowed_hosts=[HOSTED])
    page = watched.page
    page.goto(f"http://{HOSTED}:{gw.server.port}/")
    assert ADMIN_TOKEN_ENV in page.locator("#no-admin-token").inner_text()
    assert page.locator("[data-panel], #panels").count() == 0
    page.goto(gw.url + "/")  # the same gateway, on loopback: open
    assert page.locator("#panels").count() == 1

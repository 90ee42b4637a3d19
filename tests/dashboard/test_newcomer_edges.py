"""The dashboard's rough edges a newcomer met, in a real headless Chromium against a real
gateway: a heading the nav jumps to is not under the sticky header, saving a note says it was
saved, the keys form on a gateway that does not require keys says keys do nothing there, its
placeholder is whole, and on the judging page the first `j` lands on the focused first owed seat.
"""

from __future__ import annotations

from tests.helpers.browser import WAIT_MS


def test_the_nav_lands_a_heading_below_the_sticky_header(make_gateway, watch):
    gw = make_gateway()
    for n in range(3):
        gw.ask("bench/trio", f"Is loop {n} right?")
    page = watch(width=1280, height=500).page
    page.goto(gw.url + "/")
    for name in ("Models", "Usage", "Collections"):
        page.click(f".top a:has-text('{name}')")
        page.wait_for_function("() => location.hash !== ''")
        header = page.locator(".top").bounding_box()
        heading = page.locator(f"{page.evaluate('location.hash')} h2").bounding_box()
        assert header is not None and heading is not None
        assert heading["y"] >= header["y"] + header["height"], (name, heading, header)


def test_saving_a_note_says_it_was_saved(make_gateway, watched):
    gw = make_gateway()
    completion, _ = gw.ask("bench/solo", "Name a prime.")
    call = completion.bench["seats"][0]["call"]
    page = watched.page
    page.goto(gw.url + "/")
    seat = page.locator(f'[data-call="{call}"]')
    seat.locator('[data-verdict="useful"]').click()
    page.wait_for_selector(f'[data-call="{call}"][data-judged="useful"]', timeout=WAIT_MS)
    seat.locator("input[name=note]").fill("a fine prime")
    seat.locator("form.note button").click()
    page.wait_for_selector(f'[data-call="{call}"] form.note .saved:has-text("saved")')
    assert gw.http.get(f"/bench/calls/{call}").json()["verdict"]["note"] == "a fine prime"
    watched.only_from(gw.url)


def test_the_keys_form_on_a_keyless_gateway_says_keys_do_nothing_there(make_gateway, watched):
    gw = make_gateway()
    page = watched.page
    page.goto(gw.url + "/")
    hint = page.locator("#keys-unused")
    assert hint.is_visible() and "gateway.require_keys" in hint.inner_text()
    collections = page.locator("#new-key input[name=collections]")
    whole = collections.evaluate(
        """(input) => {
            const style = getComputedStyle(input);
            const context = document.createElement("canvas").getContext("2d");
            context.font = style.font;
            const room = input.clientWidth - parseFloat(style.paddingLeft)
                - parseFloat(style.paddingRight);
            return context.measureText(input.placeholder).width <= room;
        }"""
    )
    assert whole, "the collections placeholder is cut off"


def test_the_first_j_on_the_judging_page_lands_on_the_focused_first_owed_seat(
    make_gateway, watched
):
    gw = make_gateway()
    completion, _ = gw.ask("bench/trio", "Is this loop right?")
    page = watched.page
    page.goto(f"{gw.url}/panels/{completion.bench['panel']}")
    first = page.locator(".seat.current").get_attribute("data-call")
    assert first == page.locator("#answers [data-call]").first.get_attribute("data-call")
    page.keyboard.press("j")
    assert page.locator(".seat.current").get_attribute("data-call") == first
    page.keyboard.press("u")
    page.wait_for_selector(f'[data-call="{first}"][data-judged="useful"]', timeout=WAIT_MS)
    assert gw.http.get(f"/bench/calls/{first}").json()["verdict"]["useful"] is True
    page.keyboard.press("j")  # then on: the next seat
    assert page.locator(".seat.current").get_attribute("data-call") != first
    watched.only_from(gw.url)

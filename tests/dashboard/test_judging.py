"""A panel's judging page (`GET /panels/{panel}`) in a real headless Chromium against a real
gateway: every answer at once (side by side at 1400 px, stacked at 390 px, by the elements'
boxes), a click and a key press each record a verdict, claims marked reach the record, blind
judging names no model anywhere the page reaches until its seat is judged, and an answer's markup
runs and fetches nothing.

Screenshots of the page (docs/panel-wide.png, panel-narrow.png, panel-blind.png) only with
`BENCH_SCREENSHOTS=docs`.
"""

from __future__ import annotations

from gateway.dashboard.views import seat_token
from tests.helpers.bench import MODELS, bench_raw, served
from tests.helpers.browser import WAIT_MS, screenshot

ANSWER = (
    "The loop stops one short. Use `<=` where it says `<`, e.g. in the bound. "
    "Nothing else is wrong.\n\n"
    "- The bound is off by one\n"
    "- The index starts at **zero**\n\n"
    "That fixes it."
)
CLAIMS = [
    "The loop stops one short.",
    "Use `<=` where it says `<`, e.g. in the bound.",
    "Nothing else is wrong.",
    "The bound is off by one",
    "The index starts at **zero**",
    "That fixes it.",
]
SHOWN = (
    "The loop stops one short. Use <= where it says <, e.g. in the bound. Nothing else is wrong."
)


def _answers(sim) -> None:
    """Every model answers alike, naming none (the simulator's own answer names its model)."""
    for alias in MODELS:
        sim.set(served(alias), answer=ANSWER)


def _record(gw, call: str) -> dict:
    return gw.http.get(f"/bench/calls/{call}").json()


def _wait_for_verdict(page, call: str) -> None:
    page.wait_for_selector(f'[data-call="{call}"]:not([data-judged=""])', timeout=WAIT_MS)


def _boxes(page) -> list[dict]:
    return [seat.bounding_box() for seat in page.locator("#answers [data-call]").all()]


def test_every_answer_is_on_the_page_side_by_side_wide_and_stacked_narrow(make_gateway, watch, sim):
    _answers(sim)
    gw = make_gateway()
    older, _ = gw.ask("bench/solo", "An older question")
    completion, _ = gw.ask("bench/trio", "Is this loop right?")
    panel = completion.bench["panel"]
    calls = [s["call"] for s in completion.bench["seats"]]
    assert len(calls) == 5

    wide = watch(width=1400)
    page = wide.page
    page.goto(gw.url + "/")
    assert page.locator("#next-owed").get_attribute("href") == f"/panels/{panel}"
    page.locator(f'[data-panel="{panel}"] a.pid').click()  # the panel's id opens its page
    page.wait_for_url(f"{gw.url}/panels/{panel}", timeout=WAIT_MS)
    assert page.locator("#prompt").inner_text() == "Is this loop right?"
    shown = [a.get_attribute("data-call") for a in page.locator("#answers [data-call]").all()]
    assert sorted(shown) == sorted(calls)
    calls = shown  # in the order the page shows them (the order they started)
    for call in calls:
        answer = page.locator(f'[data-call="{call}"] .md')
        assert answer.is_visible() and answer.locator("p").first.inner_text() == SHOWN
        assert answer.locator("li").count() == 2
        box = answer.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1400  # no sideways scroll to see it
    boxes = _boxes(page)
    assert len({round(b["y"]) for b in boxes}) == 1  # one row
    for left, right in zip(boxes, boxes[1:], strict=False):
        assert right["x"] >= left["x"] + left["width"]  # side by side, none over another
    assert all(b["width"] >= 240 for b in boxes)
    screenshot(page, "panel-wide.png")
    wide.only_from(gw.url)

    narrow = watch(width=390, height=844)
    page = narrow.page
    page.goto(f"{gw.url}/panels/{panel}")
    boxes = _boxes(page)
    assert len({round(b["x"]) for b in boxes}) == 1  # one column
    for above, below in zip(boxes, boxes[1:], strict=False):
        assert below["y"] >= above["y"] + above["height"]  # stacked
    assert all(300 <= b["width"] <= 390 for b in boxes)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for call in calls:
        assert page.locator(f'[data-call="{call}"] .md p').first.inner_text() == SHOWN
    screenshot(page, "panel-narrow.png")

    for n, key in enumerate("unuun"):  # a five-seat panel judged from the keyboard alone
        page.keyboard.press(key)
        _wait_for_verdict(page, calls[n])
    assert [_record(gw, c)["verdict"]["useful"] for c in calls] == [True, False, True, True, False]
    assert page.locator("#owed-here").inner_text() == "0"
    following = page.locator("#next-owed.ready")  # on to the next panel owed a verdict
    assert following.get_attribute("href") == f"/panels/{older.bench['panel']}"
    narrow.only_from(gw.url)


def test_a_click_and_a_key_press_each_record_a_verdict_with_its_marked_claims_and_note(
    make_gateway, watched, sim
):
    _answers(sim)
    gw = make_gateway()
    completion, _ = gw.ask("bench/trio", "Is this loop right?")
    page = watched.page
    page.goto(f"{gw.url}/panels/{completion.bench['panel']}")
    calls = [a.get_attribute("data-call") for a in page.locator("#answers [data-call]").all()]
    assert sorted(calls) == sorted(s["call"] for s in completion.bench["seats"])
    first = page.locator(f'[data-call="{calls[0]}"]')
    assert first.locator(".claim").count() == len(CLAIMS)
    assert [c.get_attribute("data-claim") for c in first.locator(".claim").all()] == CLAIMS
    first.locator(".claim").nth(0).click()  # real
    first.locator(".claim").nth(3).click()  # a bullet point: real
    second_claim = first.locator(".claim").nth(1)
    second_claim.click()
    second_claim.click()  # false
    assert second_claim.get_attribute("data-mark") == "false"
    first.locator('[data-verdict="useful"]').click()
    _wait_for_verdict(page, calls[0])
    verdict = _record(gw, calls[0])["verdict"]
    assert verdict["useful"] is True and verdict["blind"] is False
    assert verdict["real"] == [CLAIMS[0], CLAIMS[3]] and verdict["false"] == [CLAIMS[1]]

    page.keyboard.press("j")  # from the seat just judged to the next
    assert page.locator(".seat.current").get_attribute("data-call") == calls[1]
    page.keyboard.press("n")
    _wait_for_verdict(page, calls[1])
    assert _record(gw, calls[1])["verdict"]["useful"] is False
    assert page.locator(".seat.current").get_attribute("data-call") == calls[2]  # next owed
    page.keyboard.press("k")
    assert page.locator(".seat.current").get_attribute("data-call") == calls[1]

    second = page.locator(f'[data-call="{calls[1]}"]')
    second.locator("textarea[name=note]").click()
    page.keyboard.press("u")  # typing in the note: a key is a letter there, not a verdict
    assert second.get_attribute("data-judged") == "not-useful"
    second.locator("textarea[name=note]").fill("right about the bound")
    second.locator(".claim").nth(5).click()
    second.locator("form.note button").click()
    page.wait_for_function(
        "async (call) => (await (await fetch('/bench/calls/' + call)).json()).verdict.note",
        arg=calls[1],
        timeout=WAIT_MS,
    )
    verdict = _record(gw, calls[1])["verdict"]
    assert (verdict["useful"], verdict["note"], verdict["real"]) == (
        False,
        "right about the bound",
        [CLAIMS[5]],
    )
    page.reload()  # the marks a verdict holds are shown as marked
    marked = page.locator(f'[data-call="{calls[0]}"] .claim[data-mark]')
    assert [
        (c.get_attribute("data-claim"), c.get_attribute("data-mark")) for c in marked.all()
    ] == [
        (CLAIMS[0], "real"),
        (CLAIMS[1], "false"),
        (CLAIMS[3], "real"),
    ]
    watched.only_from(gw.url)


def _blind_raw(sim_url: str) -> dict:
    """The test bench with blind judging, on connections named so a page could not say them by
    chance."""
    raw = bench_raw(sim_url, blind_judging=True)
    for model in raw["model_list"]:
        model["bench"]["connection"] = "wire-" + model["bench"]["connection"]
    return raw


def _names(record: dict) -> set[str]:
    """Everything that would name a seat's model: alias, served model, family, connection."""
    model = record["model"]
    family = model.split("/")[-1].replace("-", "")
    return {record["alias"], model, model.split("/")[-1], family, record["connection"]}


def _leaks(watched, names: set[str], since: int = 0) -> list[str]:
    """Where any of *names* shows: the page (text and attributes) and every body it fetched
    (from the *since*-th response on)."""
    found = [("page", watched.page.content())] + watched.bodies(since)
    return [f"{name} in {where}" for where, text in found for name in names if name in text]


def test_blind_judging_names_no_model_until_its_seat_is_judged(make_gateway, watched, sim):
    _answers(sim)
    gw = make_gateway(_blind_raw(sim.url))
    completion, _ = gw.ask("bench/trio", "Is this loop right?")
    panel = completion.bench["panel"]
    records = {s["call"]: _record(gw, s["call"]) for s in completion.bench["seats"]}
    every_name = set().union(*(_names(r) for r in records.values()))
    page = watched.page
    page.goto(f"{gw.url}/panels/{panel}")
    shown = page.locator("#answers [data-call]")
    assert [s.locator(".label").inner_text() for s in shown.all()] == [f"Seat {c}" for c in "ABCDE"]
    assert _leaks(watched, every_name) == []
    order = [s.get_attribute("data-call") for s in shown.all()]
    # the page's seat ids say nothing of the seat (p1.member3: the collection's third member)
    key = gw.server.server.config.app.state.access.seat_key
    call_of = {seat_token(panel, call, key): call for call in records}
    assert sorted(call_of) == sorted(order)
    seat_words = ("member", "explorer", "reserve", "merger", *records)
    assert not [word for word in seat_words if word in page.content()]

    page.keyboard.press("u")  # Seat A, the seat the page starts on
    judged = order[0]
    _wait_for_verdict(page, judged)
    record = _record(gw, call_of[judged])
    assert record["verdict"]["blind"] is True
    who = page.locator(f'[data-call="{judged}"] .who').inner_text()
    assert record["alias"] in who and record["connection"] in who
    hidden = every_name - _names(record)
    assert _leaks(watched, hidden) == []  # the verdict's reply named only the seat judged
    page.locator(f'[data-call="{order[1]}"] [data-verdict="not-useful"]').click()
    _wait_for_verdict(page, order[1])
    assert _record(gw, call_of[order[1]])["verdict"]["blind"] is True
    hidden -= _names(_record(gw, call_of[order[1]]))
    screenshot(page, "panel-blind.png")

    assert _leaks(watched, hidden) == []

    since = len(watched.responses)
    page.reload()
    assert page.locator(f'[data-call="{judged}"] .label').inner_text() == "Seat A"  # the same
    assert record["alias"] in page.locator(f'[data-call="{judged}"] .who').inner_text()
    assert page.locator(f'[data-call="{order[2]}"] .who').inner_text() == ""
    assert _leaks(watched, hidden, since) == []
    watched.only_from(gw.url)

    models = {m["alias"]: m for m in gw.http.get("/bench/models").json()["models"]}
    assert models[record["alias"]]["blind_judged"] >= 1
    assert sum(m["blind_judged"] for m in models.values()) == 2
    page.goto(gw.url + "/")  # the dashboard: Seat labels on unjudged chips, blind counts apart
    assert page.locator(f'[data-call="{order[2]}"] .alias').inner_text() == "Seat C"
    for alias, m in models.items():
        cell = page.locator(f'#models tr[data-model="{alias}"] td.judged')
        assert cell.get_attribute("data-blind") == str(m["blind_judged"])
        assert cell.get_attribute("data-open") == str(m["judged"] - m["blind_judged"])


HOSTILE = (
    'Look: <script>window.pwned = "script"</script> and '
    "<img src=x onerror=\"window.pwned = 'img'\"> then "
    "[a link](http://evil.test/click) and ![a picture](http://evil.test/pixel.png). "
    '<a href="javascript:window.pwned=1">click</a>\n\n'
    "- <svg onload=\"window.pwned='svg'\"></svg> in a list\n\n"
    "| a | b |\n|---|---|\n| <iframe src=http://evil.test/></iframe> | **x** |"
)


def test_an_answers_markup_runs_nothing_and_fetches_nothing_on_the_panel_page(
    make_gateway, watched, sim
):
    sim.set(served("alpha"), answer=HOSTILE)
    gw = make_gateway()
    completion, _ = gw.ask("bench/solo", "Say something risky.")
    call = completion.bench["seats"][0]["call"]
    page = watched.page
    page.goto(f"{gw.url}/panels/{completion.bench['panel']}")
    answer = page.locator(f'[data-call="{call}"] .md')
    text = answer.inner_text()
    assert "<script>" in text and "onerror" in text and "<iframe" in text
    assert "a link (http://evil.test/click)" in text  # a link shows as text, never followed
    assert "[image: a picture · http://evil.test/pixel.png]" in text
    assert answer.locator("script, img, a, svg, iframe, [onerror], [onload]").count() == 0
    assert answer.locator("table strong").inner_text() == "x"  # the safe markdown still draws
    answer.locator(".claim").first.click()  # clicking in it runs nothing either
    page.wait_for_timeout(300)
    assert page.evaluate("typeof window.pwned") == "undefined"
    watched.only_from(gw.url)  # nothing fetched from evil.test, nor `x`

"""Answers shaped to make the dashboard's markdown slow (a table row then a long run of spaces, a
long run of `!`, a heading of `#`s): each is drawn in bounded work, off the event loop, so the
gateway answers `/healthz` and every panel while a page of them is drawn (docs/reliability.md,
N4). What each takes to draw, for n and 4n: benchmarks/markdown_shapes.py."""

from __future__ import annotations

import threading
import time

import httpx

from gateway.dashboard import markdown as safe_markdown
from tests.helpers.bench import quiet_raw, served

N = 80_000
# one hostile shape per seat of trio (alpha, gamma, delta): each took 15-30 s to draw, all of it
# on the event loop
SHAPES = {
    "alpha": "|a|b|\n" + " " * N + "x",
    "gamma": "!" * N + " x",
    "delta": "# " + "#" * N + "x",
}


def test_hostile_shapes_are_drawn_as_what_they_are():
    table = safe_markdown.render(SHAPES["alpha"], claims=True)
    assert "<table" not in table and table.count('class="claim"') == 1  # one paragraph
    assert safe_markdown.sentences(SHAPES["gamma"]) == [SHAPES["gamma"]]  # one sentence
    heading = safe_markdown.render(SHAPES["delta"])
    assert heading == f"<h4>{'#' * N}x</h4>"
    assert safe_markdown.render("## Title ##  ") == "<h4>Title</h4>"
    assert safe_markdown.render("# ##") == "<h4>#</h4>"  # its first character always stays


def test_an_answer_past_the_drawn_bound_shows_its_rest_as_plain_text():
    head = "Fine. " * (safe_markdown.DRAWN_MOST // 6)
    rest = "**not drawn** <b>" + "!" * (3 * safe_markdown.DRAWN_MOST)
    text = head + " " * (safe_markdown.DRAWN_MOST - len(head)) + rest
    html = safe_markdown.render(text, claims=True)
    assert html.count('class="claim"') == safe_markdown.DRAWN_MOST // 6  # only the drawn part's
    assert f"last {len(rest):,} characters, as plain text" in html
    assert '<pre class="rest">**not drawn** &lt;b&gt;' in html and "<strong>" not in html
    # the drawn part is what the same answer cut at the bound draws
    assert html.startswith(safe_markdown.render(text[: safe_markdown.DRAWN_MOST], claims=True))


def _fetched_while_polling_health(url: str, path: str) -> tuple[httpx.Response, int]:
    """GET *path* while /healthz is polled; (its reply, how many health checks were both sent
    after the page was asked for and answered before its reply arrived). The page's client
    waits a minute: drawing these answers on the loop took minutes (the attack), and the health
    checks waited as long."""
    reply: list[httpx.Response] = []
    done = threading.Event()

    def fetch() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            reply.append(client.get(path))
        done.set()

    page = threading.Thread(target=fetch)
    answered_meanwhile = 0
    with httpx.Client(base_url=url, timeout=60) as health:
        page.start()
        while not done.is_set():
            assert health.get("/healthz").status_code == 200
            answered_meanwhile += not done.is_set()
            time.sleep(0.005)
    page.join()
    return reply[0], answered_meanwhile


def test_a_page_of_hostile_answers_is_drawn_while_the_gateway_answers_health(make_gateway, sim):
    for alias, shape in SHAPES.items():
        sim.set(served(alias), answer=shape)
    gw = make_gateway(quiet_raw(sim.url))
    completion, _ = gw.ask("bench/trio", "Print a table row, then many spaces.")
    panel = completion.bench["panel"]
    assert sorted(len(s["answer"]) for s in completion.bench["seats"]) == sorted(
        map(len, SHAPES.values())
    )
    for path in ("/", f"/panels/{panel}"):
        page, answered = _fetched_while_polling_health(gw.url, path)
        assert page.status_code == 200, page.text[:300]
        assert f"<h4>{'#' * 100}" in page.text and "!" * 1000 in page.text
        assert answered >= 1, f"/healthz waited for {path} to be drawn"

"""`GET /bench/panels` (newest first, paginated, owed, a key sees its own), the dashboard's
posts (CSRF token required, a gateway key never signs in), and the safe rendering of answers."""

from __future__ import annotations

import re

import httpx

from gateway.access.sessions import ADMIN_TOKEN_ENV, CSRF_COOKIE
from gateway.dashboard import markdown as safe_markdown

ADMIN = "admin-token-for-tests"


def _panel_ids(gw, **params) -> tuple[list[str], str | None]:
    reply = gw.http.get("/bench/panels", params=params)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return [p["id"] for p in body["panels"]], body["next"]


def test_panels_are_listed_newest_first_page_by_page_with_every_seat(gateway):
    asked = [gateway.ask("bench/solo", f"question {i}")[0].bench for i in range(5)]
    newest_first = [b["panel"] for b in reversed(asked)]
    first, cursor = _panel_ids(gateway, limit=2)
    second, cursor2 = _panel_ids(gateway, limit=2, before=cursor)
    third, end = _panel_ids(gateway, limit=2, before=cursor2)
    assert first + second + third == newest_first and end is None
    listed = gateway.http.get("/bench/panels").json()["panels"][0]
    assert [s["call"] for s in listed["seats"]] == [s["call"] for s in asked[-1]["seats"]]
    assert listed["prompt"] == "question 4"


def test_owed_lists_only_panels_with_answered_unjudged_seats(gateway):
    judged = gateway.ask("bench/solo", "one")[0].bench
    owing = gateway.ask("bench/solo", "two")[0].bench
    before = gateway.http.get("/bench/panels").json()["owed"]
    for seat in judged["seats"]:
        verdict = {"call": seat["call"], "useful": False}
        assert gateway.http.post("/bench/verdict", json=verdict).status_code == 200
    ids, _ = _panel_ids(gateway, owed="true")
    assert ids == [owing["panel"]]
    assert gateway.http.get("/bench/panels").json()["owed"] == before - len(judged["seats"])


def test_bad_page_queries_are_refused_and_name_the_field(gateway):
    for params, field in (
        ({"limit": "0"}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"owed": "maybe"}, "owed"),
        ({"before": "p-none"}, "before"),
    ):
        reply = gateway.http.get("/bench/panels", params=params)
        assert reply.status_code in (400, 404)
        assert reply.json()["error"]["param"] == field


def _made_by_the_admin(gw, name: str) -> str:
    """A gateway key created the way the dashboard does: signed in, then `POST /ui/keys`."""
    with httpx.Client(base_url=gw.url, timeout=30) as admin:
        token = _csrf(admin, expect=401)
        sent = {"X-CSRF-Token": token}
        signed = admin.post("/ui/signin", json={"token": ADMIN}, headers=sent)
        assert signed.status_code == 200
        made = admin.post(f"{signed.json()['root']}ui/keys", json={"name": name}, headers=sent)
        assert made.status_code == 200, made.text
        return made.json()["key"]


def test_a_key_lists_only_its_own_panels(make_gateway, monkeypatch):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, ADMIN)
    gw = make_gateway(require_keys=True)
    keys = {name: _made_by_the_admin(gw, name) for name in ("ann", "bob")}
    mine = []
    for name in ("ann", "bob", "ann"):
        reply = gw.http.post(
            "/v1/chat/completions",
            headers={"Authorization": f"Bearer {keys[name]}"},
            json={"model": "bench/solo", "messages": [{"role": "user", "content": name}]},
        )
        assert reply.status_code == 200
        if name == "ann":
            mine.append(reply.json()["bench"]["panel"])
    listed = gw.http.get("/bench/panels", headers={"Authorization": f"Bearer {keys['ann']}"})
    assert [p["id"] for p in listed.json()["panels"]] == mine[::-1]
    assert gw.http.get("/bench/panels").status_code == 401


def _csrf(http, expect: int = 200) -> str:
    page = http.get("/")
    assert page.status_code == expect
    return re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)


def test_a_dashboard_post_without_its_csrf_token_changes_nothing(gateway):
    call = gateway.ask("bench/solo")[0].bench["seats"][0]["call"]
    token = _csrf(gateway.http)
    assert gateway.http.cookies[CSRF_COOKIE] == token
    refused = gateway.http.post("/ui/verdict", json={"call": call, "useful": True})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf_failed"
    wrong = gateway.http.post(
        "/ui/verdict", json={"call": call, "useful": True}, headers={"X-CSRF-Token": "nope"}
    )
    assert wrong.status_code == 403
    form = gateway.http.post(
        "/ui/verdict", data={"call": call, "useful": "true"}, headers={"X-CSRF-Token": token}
    )
    assert form.status_code == 415  # the guard's JSON-only rule (contract §14) still holds
    assert gateway.http.get(f"/bench/calls/{call}").json()["verdict"] is None
    taken = gateway.http.post(
        "/ui/verdict", json={"call": call, "useful": True}, headers={"X-CSRF-Token": token}
    )
    assert taken.json() == {
        "call": call,
        "recorded": True,
        "blind": False,  # gateway.blind_judging is off
        "shown": {"alias": "alpha", "model": "openai/sim-alpha", "connection": "one"},
    }
    assert gateway.http.get(f"/bench/calls/{call}").json()["verdict"]["useful"] is True


def test_with_keys_required_the_page_and_its_routes_need_the_admin_session(
    make_gateway, monkeypatch
):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, ADMIN)
    gw = make_gateway(require_keys=True)
    key = _made_by_the_admin(gw, "script")
    token = _csrf(gw.http, expect=401)  # the sign-in page still sets the CSRF cookie
    sent = {"X-CSRF-Token": token, "Authorization": f"Bearer {key}"}
    assert gw.http.get("/ui/panels", headers=sent).status_code == 401
    refused = gw.http.post("/ui/signin", json={"token": key}, headers=sent)
    assert refused.status_code == 401 and "gateway key" in refused.json()["error"]["message"]
    assert gw.http.get("/", headers=sent).status_code == 401
    signed = gw.http.post("/ui/signin", json={"token": ADMIN}, headers=sent)
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    root = signed.json()["root"]  # the session's own path (gateway/access/sessions.py)
    assert cookie.count(f"path={root.lower()}") == 1
    assert gw.http.get(root).status_code == 200


def test_answers_are_escaped_before_any_markdown_is_drawn():
    html = safe_markdown.render(
        "Hi <script>x()</script>\n\n```py\n<b>&</b>\n```\n`<i>` and **<u>**\n\n# <h1>"
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<pre><code>&lt;b&gt;&amp;&lt;/b&gt;</code></pre>" in html
    assert "<code>&lt;i&gt;</code>" in html and "<strong>&lt;u&gt;</strong>" in html
    assert "<h4>&lt;h1&gt;</h4>" in html
    assert safe_markdown.render('<img src=x onerror="a()">').count("<img") == 0


def test_a_panels_page_opens_as_the_dashboard_does_and_a_gateway_key_never_opens_it(
    make_gateway, monkeypatch
):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, ADMIN)
    gw = make_gateway(require_keys=True)
    key = _made_by_the_admin(gw, "script")
    reply = gw.http.post(
        "/v1/chat/completions",
        headers={"Authorization": f"Bearer {key}"},
        json={"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]},
    )
    bench = reply.json()["bench"]
    page = f"/panels/{bench['panel']}"
    with httpx.Client(base_url=gw.url, timeout=30) as stranger:
        for headers in ({}, {"Authorization": f"Bearer {key}"}):
            refused = stranger.get(page, headers=headers)
            assert refused.status_code == 401 and 'id="signin"' in refused.text
            assert bench["seats"][0]["call"] not in refused.text
    token = _csrf(gw.http, expect=401)
    signed = gw.http.post("/ui/signin", json={"token": ADMIN}, headers={"X-CSRF-Token": token})
    root = signed.json()["root"].rstrip("/")  # the signed-in dashboard's own path
    page = root + page
    shown = gw.http.get(page)
    assert shown.status_code == 200
    assert "script-src 'self'" in shown.headers["content-security-policy"]
    for seat in bench["seats"]:
        assert f'data-call="{seat["call"]}"' in shown.text
    missing = gw.http.get(f"{root}/panels/p-none")
    assert missing.status_code == 404 and 'id="missing"' in missing.text
    listed = gw.http.get(f"{root}/").text  # the dashboard links the panel's page, not its JSON
    assert f'href="{page}"' in listed and f'href="/bench/panels/{bench["panel"]}"' not in listed
    for params in ({}, {"owed": "true"}):  # and opens the next panel owed a verdict
        shown = gw.http.get(f"{root}/", params=params).text
        assert f'<a id="next-owed" class="next-owed" href="{page}">' in shown


def test_a_blind_verdict_stays_blind_until_its_judgement_changes_and_is_counted_apart(
    make_gateway, tmp_path
):
    gw = make_gateway(blind_judging=True)
    seats = gw.ask("bench/trio")[0].bench["seats"]
    calls, aliases = [s["call"] for s in seats], [s["alias"] for s in seats]
    token = _csrf(gw.http)

    def on_page(call: str, useful: bool, **more) -> dict:
        sent = {"call": call, "useful": useful, **more}
        reply = gw.http.post("/ui/verdict", json=sent, headers={"X-CSRF-Token": token})
        assert reply.status_code == 200, reply.text
        return reply.json()

    first = on_page(calls[0], True)
    assert first["blind"] is True and first["shown"]["alias"] == aliases[0]
    assert on_page(calls[0], True, note="seen now", real=["a claim"])["blind"] is True
    assert on_page(calls[1], False)["blind"] is True
    assert on_page(calls[1], True)["blind"] is False  # changed once its model was shown
    assert gw.http.post("/bench/verdict", json={"call": calls[2], "useful": True}).json()
    assert gw.http.get(f"/bench/calls/{calls[2]}").json()["verdict"]["blind"] is False
    refused = gw.http.post("/bench/verdict", json={"call": calls[3], "useful": True, "blind": True})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "blind"

    def counted(gateway) -> list[tuple[int, int, int, int]]:
        models = {m["alias"]: m for m in gateway.http.get("/bench/models").json()["models"]}
        return [
            tuple(models[a][k] for k in ("useful", "judged", "blind_useful", "blind_judged"))
            for a in aliases[:3]
        ]

    expected = [(1, 1, 1, 1), (1, 1, 0, 0), (1, 1, 0, 0)]
    assert counted(gw) == expected
    gw.close()
    assert counted(make_gateway(store=tmp_path / "records.db")) == expected  # from the records


def test_answers_are_drawn_with_lists_quotes_and_tables_and_links_only_as_text():
    html = safe_markdown.render(
        "Intro. Then more.\n- one **b**\n- two\n  more of two\n1. first\n\n> said. So.\n\n"
        "| a | b |\n|---|---|\n| 1 | <i>2</i> |\n\n"
        '[go](javascript:void) ![pic](http://x.test/p.png "t") `[k](u)`',
        claims=True,
    )
    assert "<ul>" in html and "<ol>" in html and "<blockquote>" in html and "<table" in html
    # two sentences, three items, two quoted sentences, a row, the last paragraph's one
    assert html.count('class="claim"') == 2 + 3 + 2 + 1 + 1
    assert (
        'data-claim="two more of two"' in html and 'data-claim="1 | &lt;i&gt;2&lt;/i&gt;"' in html
    )
    assert "<a" not in html and "<img" not in html and "<i>" not in html
    assert 'go <span class="link">(javascript:void)</span>' in html
    assert '<span class="image">[image: pic · http://x.test/p.png]</span>' in html
    assert "<code>[k](u)</code>" in html  # inside code, nothing is drawn
    plain = safe_markdown.render("Intro. Then more.")
    assert "claim" not in plain and plain == "<p>Intro. Then more.</p>"
    assert safe_markdown.sentences("See e.g. this. And `a. B` too. Fine") == [
        "See e.g. this.",
        "And `a. B` too.",
        "Fine",
    ]

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
        assert admin.post("/ui/signin", json={"token": ADMIN}, headers=sent).status_code == 200
        made = admin.post("/ui/keys", json={"name": name}, headers=sent)
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
    assert taken.json() == {"call": call, "recorded": True}
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
    assert gw.http.get("/").status_code == 200


def test_answers_are_escaped_before_any_markdown_is_drawn():
    html = safe_markdown.render(
        "Hi <script>x()</script>\n\n```py\n<b>&</b>\n```\n`<i>` and **<u>**\n\n# <h1>"
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<pre><code>&lt;b&gt;&amp;&lt;/b&gt;</code></pre>" in html
    assert "<code>&lt;i&gt;</code>" in html and "<strong>&lt;u&gt;</strong>" in html
    assert "<h4>&lt;h1&gt;</h4>" in html
    assert safe_markdown.render('<img src=x onerror="a()">').count("<img") == 0

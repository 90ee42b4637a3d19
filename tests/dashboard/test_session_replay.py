"""The admin's session replayed (docs/reliability.md, N27 and N28). Browsers send a host's cookies
to every port of it: another web server the admin opens on 127.0.0.1 was sent `bench_session`
and `bench_csrf`, and replaying them created a key; and a copied session still worked for 12 h
after sign-out. Here a real Chromium signs in, then opens a page of another local server, which
replays with httpx what it was sent; then a session copied from the browser is replayed after
signing out."""

from __future__ import annotations

import sqlite3
import threading
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from gateway.access.sessions import ADMIN_TOKEN_ENV, CSRF_COOKIE, SESSION_COOKIE
from tests.helpers.browser import WAIT_MS

ADMIN = "admin-token-of-the-replay-test"


class _Neighbour(BaseHTTPRequestHandler):
    """Another web server on this machine: it keeps the cookies each request brings."""

    sent: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        jar = SimpleCookie(self.headers.get("Cookie", ""))
        self.sent.append({name: morsel.value for name, morsel in jar.items()})
        body = b"<!doctype html><title>a dev server</title><p>hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def neighbour():
    _Neighbour.sent = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Neighbour)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _replayed(gw, cookies: dict[str, str], root: str = "") -> list[int]:
    """What a replay of *cookies* gets: the dashboard, a new key, the panel list."""
    headers = {"X-CSRF-Token": cookies.get(CSRF_COOKIE, "")}
    with httpx.Client(base_url=gw.url, cookies=cookies, timeout=30) as thief:
        return [
            thief.get(f"{root}/").status_code,
            thief.post(f"{root}/ui/keys", json={"name": "stolen"}, headers=headers).status_code,
            thief.get(f"{root}/ui/panels").status_code,
        ]


def test_a_session_is_useless_to_another_port_and_ends_at_sign_out(
    make_gateway, watched, monkeypatch, neighbour
):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, ADMIN)
    gw = make_gateway(require_keys=True)
    page = watched.page
    page.goto(gw.url + "/")
    page.fill("input[name=token]", ADMIN)
    page.click("form#signin button")
    page.wait_for_selector("#keys", timeout=WAIT_MS)
    root = page.url.removeprefix(gw.url).removesuffix("/")
    assert root.startswith("/s/")

    # the admin opens another local server's pages: it is sent what the browser sends any port
    other = f"http://127.0.0.1:{neighbour.server_address[1]}"
    for path in ("/", "/panels/p1", "/ui/keys", "/s/"):
        page.goto(other + path)
    received = _Neighbour.sent
    assert len(received) >= 4 and all(SESSION_COOKIE not in sent for sent in received)
    assert CSRF_COOKIE in received[0]  # (sent, as every host cookie is: it opens nothing alone)
    assert _replayed(gw, received[0]) == [401, 401, 401]
    assert _replayed(gw, received[0], root) == [401, 401, 401]

    # the admin's own session, copied whole, works at its path until sign-out
    copied = {c["name"]: c["value"] for c in watched.context.cookies(gw.url + root + "/")}
    assert SESSION_COOKIE in copied
    page.goto(gw.url + "/")  # from the bare address, the page goes back to its session's path
    page.wait_for_selector("#keys", timeout=WAIT_MS)
    assert page.url == f"{gw.url}{root}/"
    with httpx.Client(base_url=gw.url, cookies=copied, timeout=30) as copy:
        assert copy.get(f"{root}/ui/panels").status_code == 200  # a real copy, still good
    page.click("#signout")
    page.wait_for_selector("form#signin", timeout=WAIT_MS)
    assert _replayed(gw, copied, root) == [401, 401, 401]  # ended on the server
    with sqlite3.connect(gw.config.store.removeprefix("sqlite:///")) as db:
        assert db.execute("SELECT COUNT(*) FROM gateway_keys").fetchone()[0] == 0  # none made

"""Admin sign-in under a burst of real wrong tokens (contract §17): after 10 in a minute from one
client, 429 with Retry-After, the right token included, until that minute is over; another client
is not held up by it."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from gateway.access.sessions import ADMIN_TOKEN_ENV, SESSION_COOKIE
from tests.helpers.clocks import ManualClock

TOKEN = "the-admin-token-of-this-test"
CSRF = {"X-CSRF-Token": "t"}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(time.time())


@pytest.fixture
def keyed(make_gateway, monkeypatch, clock):
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    return make_gateway(require_keys=True, clock=clock.now)


def client(gw, source: str = "127.0.0.1") -> httpx.Client:
    """A browser-like client of the sign-in form, from the loopback address *source*."""
    return httpx.Client(
        base_url=gw.url,
        transport=httpx.HTTPTransport(local_address=source),
        cookies={"bench_csrf": "t"},
        timeout=30,
    )


def sign_in(http: httpx.Client, token: str) -> httpx.Response:
    return http.post("/ui/signin", json={"token": token}, headers=CSRF)


def test_a_burst_of_wrong_admin_tokens_gets_429_after_ten_and_the_right_one_waits_too(keyed, clock):
    with client(keyed) as http, ThreadPoolExecutor(8) as pool:
        burst = list(pool.map(lambda i: sign_in(http, f"guess-{i}"), range(60)))
        statuses = [r.status_code for r in burst]
        assert statuses.count(401) == 10 and statuses.count(429) == 50, statuses
        refused = next(r for r in burst if r.status_code == 429)
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        error = refused.json()["error"]
        assert error["code"] == "too_many_sign_ins" and "10 in a minute" in error["message"]

        right = sign_in(http, TOKEN)  # a lucky guess inside the lockout tells nothing
        assert right.status_code == 429 and SESSION_COOKIE not in right.cookies

        clock.advance(61)  # the client's minute is over
        right = sign_in(http, TOKEN)
        assert right.status_code == 200 and SESSION_COOKIE in right.cookies
        assert sign_in(http, "guess-again").status_code == 401  # counting starts again


def test_another_client_is_not_held_up_by_one_guessing(keyed):
    with client(keyed) as guesser, client(keyed, "127.0.0.2") as admin:
        for i in range(11):
            sign_in(guesser, f"guess-{i}")
        assert sign_in(guesser, "guess").status_code == 429
        assert sign_in(admin, "wrong once").status_code == 401
        assert sign_in(admin, TOKEN).status_code == 200


def test_a_rotating_x_forwarded_for_does_not_escape_the_count(keyed):
    """300 wrong tokens, each naming another client in X-Forwarded-For: the gateway believes
    no forwarded header unless gateway.trusted_proxies names the sender, so they are all one
    client's, 429 after the tenth (before: 300 401s in 0.3 s)."""
    with client(keyed) as http:
        statuses = [
            http.post(
                "/ui/signin",
                json={"token": f"guess-{i}"},
                headers={**CSRF, "X-Forwarded-For": f"10.0.{i // 256}.{i % 256}"},
            ).status_code
            for i in range(300)
        ]
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429] * 290


def test_a_trusted_proxy_names_its_clients(make_gateway, monkeypatch):
    """With the proxy's address in gateway.trusted_proxies, each forwarded client is counted as
    itself: one guessing behind the proxy does not hold up another."""
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    gw = make_gateway(require_keys=True, trusted_proxies=["127.0.0.1"])
    with client(gw) as proxy:

        def from_(address: str, token: str) -> int:
            headers = {**CSRF, "X-Forwarded-For": address}
            return proxy.post("/ui/signin", json={"token": token}, headers=headers).status_code

        assert [from_("203.0.113.7", f"guess-{i}") for i in range(11)][-1] == 429
        assert from_("203.0.113.8", TOKEN) == 200
    with client(gw, "127.0.0.2") as stranger:  # not a trusted proxy: its header is not believed
        statuses = [
            stranger.post(
                "/ui/signin",
                json={"token": "guess"},
                headers={**CSRF, "X-Forwarded-For": f"198.51.100.{i}"},
            ).status_code
            for i in range(11)
        ]
        assert statuses[-1] == 429


def test_a_browser_that_signed_in_before_is_not_locked_out_by_others_wrong_tokens(keyed, clock):
    """Every local process signs in from 127.0.0.1: ten wrong tokens from any of them locked the
    admin out for a minute, again every minute. A browser that signed in before sends the
    device token it was given (its page keeps it in localStorage, which no other origin reads)
    and is counted as itself; one that never signed in shares its address's count."""
    with client(keyed) as admin, client(keyed) as stranger:
        first = admin.post("/ui/signin", json={"token": TOKEN}, headers=CSRF)
        assert first.status_code == 200
        device = first.json()["device"]

        def admin_signs_in(**more: object) -> int:
            body = {"token": TOKEN, **more}
            return admin.post("/ui/signin", json=body, headers=CSRF).status_code

        for i in range(10):
            assert sign_in(stranger, f"guess-{i}").status_code == 401
        assert sign_in(stranger, TOKEN).status_code == 429  # the address is locked out
        assert admin_signs_in() == 429  # (a browser never signed in: the address's count)
        assert admin_signs_in(device=device.replace(".", ".x", 1)) == 429  # not one it gave
        assert admin_signs_in(device=device) == 200
        for i in range(10):  # the device's own wrong tokens have their own bound
            wrong = {"token": f"guess-{i}", "device": device}
            assert admin.post("/ui/signin", json=wrong, headers=CSRF).status_code == 401
        assert admin_signs_in(device=device) == 429
        clock.advance(61)
        assert admin_signs_in(device=device) == 200

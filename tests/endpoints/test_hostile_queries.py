"""Query strings, headers and cookies that once gave a 500 (contract §17: no input gives one): a
400 in the caller's format now, or the refusal the input earns. An unexpected error logs one
traceback, not two; the access log names the key a request came with."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from starlette.routing import Route

from gateway.access.keys import key_record, new_key
from gateway.app import create_app
from gateway.config.settings import parse_config
from gateway.serve.access_log import AccessLog
from gateway.serve.server import ServerThread
from gateway.store.open import open_store
from tests.helpers.bench import assert_openai_error, bench_raw

SUPERSCRIPT_TWO = "%C2%B2"  # '²'.isdigit() is true, and int('²') fails


@pytest.mark.parametrize(
    "path, param",
    [
        (f"/bench/panels?limit={SUPERSCRIPT_TWO}", "limit"),
        ("/bench/panels?limit=" + "9" * 5000, "limit"),  # past int()'s 4300 digits
        ("/bench/panels?limit=%D9%A3", "limit"),  # an Arabic-Indic three
        ("/bench/usage?month=9999-12", "month"),  # its end would be in the year 10000
        ("/bench/usage?month=%D9%A2%D9%A0%D9%A2%D9%A5-%D9%A0%D9%A3", "month"),
        ("/bench/usage?month=2025-03%0A", "month"),
        ("/bench/usage?month=0000-01", "month"),
    ],
)
def test_a_query_that_gave_a_500_is_a_400_naming_its_parameter(gateway, path, param):
    error = assert_openai_error(gateway.http.get(path), 400)
    assert error["param"] == param


@pytest.mark.parametrize("path", ["/", "/ui/panels"])
def test_the_dashboards_pages_refuse_such_a_limit_with_a_400(gateway, path):
    assert gateway.http.get(f"{path}?limit={SUPERSCRIPT_TWO}").status_code == 400


def test_a_host_or_cookie_with_such_digits_is_refused_not_a_500(gateway):
    host = gateway.http.get("/v1/models", headers={"Host": "127.0.0.1:\u00b2".encode("latin-1")})
    assert_openai_error(host, 403)
    loopback = gateway.http.get(
        "/v1/models", headers={"Host": f"127.\u00b2.0.1:{gateway.server.port}".encode("latin-1")}
    )
    assert_openai_error(loopback, 403)
    cookie = gateway.http.get(
        "/ui/panels", headers={"Cookie": "bench_session=\u00b2.n.m".encode("latin-1")}
    )
    assert cookie.status_code == 200  # on loopback without keys: open, the cookie ignored


def test_an_unexpected_error_is_a_500_in_the_callers_format_logged_once(sim, tmp_path, caplog):
    raw = bench_raw(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    app = create_app(parse_config(raw, base=tmp_path))

    async def broken(request):  # a bug on some route: what every route falls back on
        raise RuntimeError("a bug")

    app.router.routes.append(Route("/v1/broken", broken, methods=["GET"]))
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as http:
        caplog.clear()
        reply = http.get("/v1/broken")
    error = assert_openai_error(reply, 500)
    assert "failed unexpectedly" in error["message"]
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert len(tracebacks) == 1, [r.getMessage() for r in tracebacks]
    assert tracebacks[0].getMessage() == "unexpected error on /v1/broken"


def test_the_access_log_names_the_key_never_the_key_itself(sim, tmp_path, caplog):
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    app = create_app(parse_config(raw, base=tmp_path))
    app.add_middleware(AccessLog, anonymous="-")  # as `serve` adds it
    key = new_key()
    caplog.set_level(logging.INFO, logger="bench.requests")
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as http:
        asyncio.run(_add_key(app.state.runtime.config.store, key))
        assert http.get("/v1/models", headers={"Authorization": f"Bearer {key}"}).status_code == 200
        body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
        asked = http.post("/v1/chat/completions", json=body, headers={"x-api-key": key})
        assert asked.status_code == 200
        assert http.get("/v1/models").status_code == 401
    lines = [r.getMessage() for r in caplog.records if r.name == "bench.requests"]
    assert any(line.startswith("GET /v1/models 200 key=ci-bot ") for line in lines), lines
    panel = asked.headers["X-Bench-Panel"]
    assert any(f"POST /v1/chat/completions 200 key=ci-bot panel={panel}" in x for x in lines)
    assert any(line.startswith("GET /v1/models 401 key=- ") for line in lines)
    assert all(key not in line for line in lines)


async def _add_key(url: str, key: str) -> None:
    """The key, written to the gateway's own store as `keys create` writes it."""
    store = open_store(url)
    await store.open()
    try:
        await store.add_key(key_record("ci-bot", key, None, None))
    finally:
        await store.close()

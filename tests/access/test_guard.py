"""Web pages cannot use the gateway behind its user's back (contract §14), tried as the attack.

Each test forges what a browser would send for a hostile page (a rebound `Host`, a foreign
`Origin`, `Sec-Fetch-Site: cross-site`, a form or text/plain body) at the real gateway on a real
server, and checks that the refusal called no model and wrote nothing.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import stat

import pytest

from gateway.access.guard import Address, is_json, is_loopback, parse_host, parse_origin
from gateway.config.settings import ConfigError, parse_config
from tests.helpers.bench import bench_raw

PANEL = {"model": "bench/trio", "messages": [{"role": "user", "content": "spend my quota"}]}
TABLES = ("panels", "calls", "verdicts")


def counts(tmp_path) -> dict[str, int]:
    with sqlite3.connect(tmp_path / "records.db") as db:
        return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


def refused(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    if code is not None:
        assert error["code"] == code
    assert "access-control-allow-origin" not in response.headers
    return error


def one_call(gw) -> str:
    """A real panel, so a verdict has a real call to aim at; returns one of its call ids."""
    completion, _ = gw.ask()
    return completion.model_extra["bench"]["seats"][0]["call"]


# --- DNS rebinding: a Host that is not the gateway's own -----------------------------------


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "localhost:1", ""])
def test_a_rebound_host_is_refused_everywhere_and_nothing_happens(
    make_gateway, sim, tmp_path, host
):
    gw = make_gateway()
    call = one_call(gw)
    panel = call.split(".")[0]
    before, upstream = counts(tmp_path), len(sim.log())
    forged = {"Host": host.format(port=gw.server.port)}
    attempts = [
        gw.http.post("/v1/chat/completions", json=PANEL, headers=forged),
        gw.http.post("/v1/chat/completions", json={**PANEL, "stream": True}, headers=forged),
        gw.http.get("/bench/models", headers=forged),
        gw.http.get("/v1/models", headers=forged),
        gw.http.get(f"/bench/panels/{panel}", headers=forged),
        gw.http.get(f"/bench/calls/{call}", headers=forged),
        gw.http.post("/bench/verdict", json={"call": call, "useful": False}, headers=forged),
    ]
    for response in attempts:
        error = refused(response, 403, "host_not_allowed")
        assert "gateway.allowed_hosts" in error["message"]
        assert "spend my quota" not in response.text  # the recorded prompt is not read
    assert len(sim.log()) == upstream, "a refused request reached the upstream"
    assert counts(tmp_path) == before, "a refused request wrote a record"


def test_a_request_without_a_host_is_refused(gateway, sim):
    body = json.dumps(PANEL).encode()
    for version in ("HTTP/1.1", "HTTP/1.0"):  # (HTTP clients will not leave Host out: a socket)
        with socket.create_connection((gateway.server.host, gateway.server.port)) as sock:
            sock.sendall(
                f"POST /v1/chat/completions {version}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        head, _, payload = reply.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] == b"403", head
        assert json.loads(payload)["error"]["code"] == "host_not_allowed"
    assert sim.log() == []


def test_loopback_names_with_the_bound_port_are_served(gateway):
    port = gateway.server.port
    for host in (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"127.0.0.2:{port}",
        f"LOCALHOST:{port}",
    ):
        response = gateway.http.get("/v1/models", headers={"Host": host})
        assert response.status_code == 200, (host, response.text)


def test_a_name_in_allowed_hosts_is_served_on_any_port_or_its_own(make_gateway, sim):
    gw = make_gateway(allowed_hosts=["bench.lan", "box.lan:9000"])
    assert gw.http.get("/v1/models", headers={"Host": "bench.lan:8123"}).status_code == 200
    assert gw.http.get("/v1/models", headers={"Host": "bench.lan"}).status_code == 200
    assert gw.http.get("/v1/models", headers={"Host": "box.lan:9000"}).status_code == 200
    refused(gw.http.get("/v1/models", headers={"Host": "box.lan:9001"}), 403)
    refused(gw.http.get("/v1/models", headers={"Host": "evil.bench.lan"}), 403)
    served = gw.http.post("/v1/chat/completions", json=PANEL, headers={"Host": "bench.lan"})
    assert served.status_code == 200 and served.json()["bench"]["seats"]


def test_a_loopback_address_in_allowed_hosts_is_served_as_a_proxy_in_front_passes_it_on(
    make_gateway, sim
):
    # nginx on 127.0.0.1:8124 in front of the gateway keeps the client's Host (compose's replicas)
    gw = make_gateway(allowed_hosts=["127.0.0.1:8124"])
    proxied = {"Host": "127.0.0.1:8124", "Origin": "http://127.0.0.1:8124"}
    served = gw.http.post("/v1/chat/completions", json=PANEL, headers=proxied)
    assert served.status_code == 200 and served.json()["bench"]["seats"]
    refused(gw.http.get("/v1/models", headers={"Host": "127.0.0.1:8125"}), 403)
    other_port = {"Origin": "http://127.0.0.1:8125"}
    refused(gw.http.get("/v1/models", headers=other_port), 403, "origin_not_allowed")


def test_the_host_of_public_url_is_served(make_gateway):
    gw = make_gateway(public_url="https://bench.example.com/gateway")
    for host in ("bench.example.com", "bench.example.com:443"):
        assert gw.http.get("/bench/models", headers={"Host": host}).status_code == 200
    refused(gw.http.get("/bench/models", headers={"Host": "bench.example.com:80"}), 403)


def test_healthz_answers_a_foreign_host_for_container_probes(gateway):
    response = gateway.http.get("/healthz", headers={"Host": "evil.example"})
    assert response.status_code == 200 and response.json() == {"status": "ok"}


# --- cross-site simple requests --------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ],
)
def test_a_body_that_is_not_json_is_refused_415_and_nothing_happens(
    gateway, sim, tmp_path, content_type
):
    call = one_call(gateway)
    before, upstream = counts(tmp_path), len(sim.log())
    for path, body in (
        (
            "/v1/chat/completions",
            b'{"model": "bench/trio", "messages": [{"role": "user", "content": "x"}]}',
        ),
        ("/bench/verdict", b'{"call": "%s", "useful": false}' % call.encode()),
    ):
        response = gateway.http.post(path, content=body, headers={"Content-Type": content_type})
        refused(response, 415, "unsupported_media_type")
    assert len(sim.log()) == upstream
    assert counts(tmp_path) == before


def test_json_media_types_with_parameters_are_accepted(gateway):
    for content_type in ("application/json; charset=utf-8", "application/vnd.bench+json"):
        response = gateway.http.post(
            "/v1/chat/completions",
            content=b'{"model": "bench/solo", "messages": [{"role": "user", "content": "x"}]}',
            headers={"Content-Type": content_type},
        )
        assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},  # another local web app, on another port
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_foreign_page_is_refused_and_nothing_happens(gateway, sim, tmp_path, headers):
    call = one_call(gateway)
    before, upstream = counts(tmp_path), len(sim.log())
    attempts = [
        gateway.http.post("/v1/chat/completions", json=PANEL, headers=headers),
        gateway.http.post(
            "/v1/chat/completions",
            content=b'{"model": "bench/trio", "messages": [{"role": "user", "content": "x"}]}',
            headers={**headers, "Content-Type": "text/plain"},
        ),
        gateway.http.post("/bench/verdict", json={"call": call, "useful": False}, headers=headers),
        gateway.http.get("/bench/models", headers=headers),
    ]
    for response in attempts:
        error = refused(response, 403, "origin_not_allowed")
        assert "gateway.allowed_origins" in error["message"]
    assert len(sim.log()) == upstream
    assert counts(tmp_path) == before


def test_the_gateways_own_origin_and_same_site_requests_are_served(gateway):
    own = f"http://127.0.0.1:{gateway.server.port}"
    for headers in ({"Origin": own, "Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}):
        assert gateway.http.get("/bench/models", headers=headers).status_code == 200


# --- CORS, for allowed origins only ----------------------------------------------------------

APP = "https://app.example.com"


def test_an_allowed_origins_preflight_is_answered_204_with_its_origin_echoed(make_gateway, sim):
    gw = make_gateway(allowed_origins=[APP])
    response = gw.http.options(
        "/v1/chat/completions",
        headers={
            "Origin": APP,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, x-panel-shape, x-evil",
        },
    )
    assert response.status_code == 204
    h = response.headers
    assert h["access-control-allow-origin"] == APP
    assert "*" not in h["access-control-allow-origin"]
    assert "access-control-allow-credentials" not in h
    assert "POST" in h["access-control-allow-methods"]
    allowed = {v.strip() for v in h["access-control-allow-headers"].split(",")}
    assert allowed == {"authorization", "content-type", "x-panel-shape"}
    assert int(h["access-control-max-age"]) > 0
    assert "Origin" in h["vary"]
    assert sim.log() == []


def test_a_foreign_origins_preflight_gets_no_cors(make_gateway):
    gw = make_gateway(allowed_origins=[APP])
    response = gw.http.options(
        "/v1/chat/completions",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    refused(response, 403, "origin_not_allowed")


def test_an_allowed_origins_panel_carries_cors_headers_that_expose_the_panel(make_gateway, sim):
    gw = make_gateway(allowed_origins=[APP])
    response = gw.http.post(
        "/v1/chat/completions", json=PANEL, headers={"Origin": APP, "Sec-Fetch-Site": "cross-site"}
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == APP
    assert "Origin" in response.headers["vary"]
    exposed = {v.strip() for v in response.headers["access-control-expose-headers"].split(",")}
    assert {"X-Bench-Panel", "X-Panel-Shape", "X-Bench-Dropped", "Retry-After"} <= exposed
    assert response.headers["x-bench-panel"] == response.json()["bench"]["panel"]
    assert "access-control-allow-credentials" not in response.headers
    streamed = gw.http.post(
        "/v1/chat/completions", json={**PANEL, "stream": True}, headers={"Origin": APP}
    )
    assert streamed.status_code == 200 and "data:" in streamed.text
    assert streamed.headers["access-control-allow-origin"] == APP


def test_a_response_without_an_origin_carries_no_cors(make_gateway):
    gw = make_gateway(allowed_origins=[APP])
    response = gw.http.get("/bench/models")
    assert "access-control-allow-origin" not in response.headers


def test_options_on_a_route_answers_with_allow(gateway):
    response = gateway.http.options("/v1/chat/completions")
    assert response.status_code == 204
    assert set(response.headers["allow"].split(", ")) == {"POST", "OPTIONS"}
    assert "access-control-allow-origin" not in response.headers
    models = gateway.http.options("/bench/panels/p123")
    assert models.status_code == 204 and "GET" in models.headers["allow"]
    assert gateway.http.options("/nope").status_code == 404


def test_a_wrong_method_is_405_with_allow(gateway):
    response = gateway.http.get("/v1/chat/completions")
    assert response.status_code == 405
    assert "POST" in response.headers["allow"]


# --- the small ones (§4) ---------------------------------------------------------------------


def test_the_record_store_is_readable_by_its_owner_only(gateway, tmp_path):
    one_call(gateway)
    for name in ("records.db", "records.db-wal", "records.db-shm"):  # WAL: all three, while open
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


def test_a_huge_unknown_model_name_is_not_echoed_whole(gateway, sim):
    name = "x" * 10_000
    response = gateway.http.post(
        "/v1/chat/completions",
        json={"model": f"bench/{name}", "messages": [{"role": "user", "content": "x"}]},
    )
    error = refused(response, 404)
    assert len(error["message"]) < 2_000
    assert "x" * 100 + "…" in error["message"]
    assert sim.log() == []


# --- the matching itself, as tables ----------------------------------------------------------


@pytest.mark.parametrize(
    "raw, parsed",
    [
        ("localhost:8123", Address("localhost", 8123)),
        ("Bench.LAN", Address("bench.lan")),
        ("[::1]:80", Address("[::1]", 80)),
        ("[::1]", Address("[::1]")),
        ("evil.example:0", None),
        ("evil.example:99999", None),
        ("evil.example:8x", None),
        ("a@b", None),
        ("", None),
        ("[::1]x", None),
    ],
)
def test_host_headers_parse(raw, parsed):
    assert parse_host(raw) == parsed


def test_origins_parse_with_default_ports():
    assert parse_origin("https://App.example.com") == ("https", Address("app.example.com", 443))
    assert parse_origin("http://127.0.0.1:8123/") == ("http", Address("127.0.0.1", 8123))
    assert parse_origin("null") is None
    assert parse_origin("file:///etc") is None


def test_loopback_and_json_tables():
    assert all(map(is_loopback, ("localhost", "127.0.0.1", "127.9.9.9", "[::1]")))
    assert not any(map(is_loopback, ("127.0.0.1.evil.example", "localhost.evil", "128.0.0.1")))
    assert all(
        map(is_json, ("application/json", "Application/JSON; charset=utf-8", "application/x+json"))
    )
    assert not any(map(is_json, ("text/plain", "text/json", "application/jsonp", "")))


def test_the_web_settings_are_read_and_a_bad_one_is_named(sim, tmp_path):
    raw = bench_raw(sim.url, allowed_hosts=["bench.lan"], public_url="https://b.example/x")
    config = parse_config(raw, base=tmp_path)
    assert list(config.gateway.allowed_hosts) == ["bench.lan"]
    assert list(config.gateway.allowed_origins) == []
    with pytest.raises(ConfigError) as failed:
        parse_config(bench_raw(sim.url, public_url="bench.lan", allowed_origins="*"), base=tmp_path)
    assert any("gateway.public_url" in p for p in failed.value.problems)
    assert any("gateway.allowed_origins" in p for p in failed.value.problems)

"""Request heads, as an attacker sends them on raw sockets: one too large gets a 431, one that
trickles or never comes ends the connection, and ordinary traffic (keep-alive pauses, slow
panels, large bodies) is untouched."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from gateway.app import create_app
from gateway.protocol import HEAD_BYTES, HeadLimitedProtocol
from gateway.serving import ServerThread
from gateway.settings import parse_config
from tests.conftest import Gateway, bench_raw, served
from tests.test_refusals import nothing_happened

HEAD_TIMEOUT_S = 1.0
CLOSED_WITHIN_S = 8.0  # generous against a 1 s timeout: it proves the close, not its speed


@pytest.fixture
def quick(sim, tmp_path):
    """A gateway whose request heads must be complete within 1 s."""
    raw = bench_raw(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = parse_config(raw, base=tmp_path)
    http = HeadLimitedProtocol.limited(head_timeout_s=HEAD_TIMEOUT_S)
    gw = Gateway(ServerThread(create_app(config), http=http).start(), config)
    yield gw
    gw.close()


def connect(gateway) -> socket.socket:
    sock = socket.create_connection((gateway.server.host, gateway.server.port))
    sock.settimeout(CLOSED_WITHIN_S + 2)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (an error here fails the test: a timeout means the
    connection was left open)."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def send_quietly(sock: socket.socket, data: bytes) -> None:
    """Send what the server may refuse half-way (it closes once it has answered)."""
    try:
        sock.sendall(data)
    except OSError:
        pass


def head_with(header: bytes) -> bytes:
    return b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + header + b"\r\n\r\n"


@pytest.mark.parametrize("size", [1_000_000, HEAD_BYTES + 1_000])
def test_a_head_over_the_limit_gets_a_431_and_the_gateway_serves_on(gateway, sim, tmp_path, size):
    sock = connect(gateway)
    sender = threading.Thread(target=send_quietly, args=(sock, head_with(b"a" * size)))
    sender.start()
    reply = read_all(sock)
    sender.join()
    sock.close()
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert b'"code": "header_too_large"' in reply
    assert gateway.http.get("/healthz").status_code == 200
    nothing_happened(sim, tmp_path / "records.db")


def test_a_head_just_under_the_limit_is_served(gateway):
    response = gateway.http.get("/healthz", headers={"X-Pad": "a" * (HEAD_BYTES - 1_000)})
    assert response.status_code == 200


def test_a_head_trickled_a_byte_at_a_time_is_cut_off(quick):
    sock = connect(quick)
    began = time.monotonic()
    head = head_with(b"a" * 100)
    try:
        for byte in head[:-1]:  # never the last byte: the head is never complete
            sock.sendall(bytes([byte]))
            time.sleep(0.25)
            if time.monotonic() - began > CLOSED_WITHIN_S:
                break
    except OSError:
        pass  # closed under us: what we want
    reply = read_all(sock)
    sock.close()
    assert time.monotonic() - began < CLOSED_WITHIN_S
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]


def test_a_silent_connection_is_closed(quick):
    sock = connect(quick)
    began = time.monotonic()
    assert read_all(sock) == b""
    sock.close()
    assert time.monotonic() - began < CLOSED_WITHIN_S


def test_a_keep_alive_pause_longer_than_the_head_timeout_is_not_cut(quick):
    with httpx.Client(base_url=quick.url, timeout=10) as client:
        assert client.get("/healthz").status_code == 200
        time.sleep(HEAD_TIMEOUT_S * 1.5)  # idle between requests: uvicorn's keep-alive rules
        answers = [client.get("/healthz").status_code for _ in range(20)]
        assert answers == [200] * 20
        assert client.get("/healthz").http_version == "HTTP/1.1"


def test_a_panel_slower_than_the_head_timeout_is_answered(quick, sim):
    sim.set(served("alpha"), latency_s=HEAD_TIMEOUT_S * 1.5)
    completion, _ = quick.ask("bench/solo")
    seats = completion.model_extra["bench"]["seats"]
    assert all(seat["status"] == "ok" for seat in seats)
    assert max(seat["seconds"] for seat in seats) > HEAD_TIMEOUT_S

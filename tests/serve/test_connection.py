"""Request heads, as an attacker sends them on raw sockets: one too large gets a 431, one that
trickles or never comes ends the connection, and ordinary traffic (keep-alive pauses, slow
panels, large bodies) is untouched."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import pytest

from gateway.app import create_app
from gateway.config.settings import parse_config
from gateway.serve.connection import GATHER_BYTES, HEAD_BYTES, Gathered, HeadLimitedProtocol
from gateway.serve.server import ServerThread
from tests.helpers.bench import Gateway, bench_raw, nothing_happened, served

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
    assert b'"code": "header_too_large"' in reply and reply.endswith(b"}\n")
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


class FakeTransport:
    """What a response cycle writes to, noting each write as the socket would get it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> str:
        return f"extra {name}"


def test_what_a_response_sends_in_one_step_leaves_as_one_write():
    """Headers, the held chunks and the first text of a route stream wake the client once."""

    async def main():
        transport = FakeTransport()
        gathered = Gathered(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        for part in (b"HTTP/1.1 200 OK\r\n\r\n", b"role", b"first text"):
            gathered.write(part)
        before = list(transport.writes)
        await asyncio.sleep(0)  # the end of the step
        after_step = list(transport.writes)
        gathered.write(b"later")
        gathered.close()  # what is pending leaves before the connection closes
        return before, after_step, transport.writes, transport.closed, gathered

    before, after_step, writes, closed, gathered = asyncio.run(main())
    assert before == []
    assert after_step == [b"HTTP/1.1 200 OK\r\n\r\nrolefirst text"]
    assert writes[1:] == [b"later"] and closed
    assert gathered.get_extra_info("peername") == "extra peername"  # the rest passes through


def test_a_big_body_is_written_at_once_so_flow_control_sees_it():
    async def main():
        transport = FakeTransport()
        gathered = Gathered(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        gathered.write(b"x" * (GATHER_BYTES - 1))
        gathered.write(b"y")
        return [len(w) for w in transport.writes]

    assert asyncio.run(main()) == [GATHER_BYTES]


def test_headers_are_not_held_back_while_the_app_waits_for_its_body():
    """Gathering lasts one step: a stream's headers reach the client while its first chunk
    is still being waited for (a client's header timeout, an SSE client's open event)."""
    release = threading.Event()

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        while not release.is_set():
            await asyncio.sleep(0.01)
        await send({"type": "http.response.body", "body": b"late", "more_body": False})

    server = ServerThread(app, http=HeadLimitedProtocol).start()
    try:
        sock = socket.create_connection((server.host, server.port))
        sock.settimeout(CLOSED_WITHIN_S)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        release.set()
        rest = head.split(b"\r\n\r\n", 1)[1]
        while b"0\r\n\r\n" not in rest:
            rest += sock.recv(65536)
        sock.close()
    finally:
        release.set()
        server.stop()
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"late" in rest

"""Request bodies, as an attacker trickles them on raw sockets: a body still arriving holds no
panel or seat slot, one not arrived within `gateway.body_timeout_s` gets a 408 and its
connection closed, and a body nobody waits for ends its connection once it is answered."""

from __future__ import annotations

import select
import socket
import threading
import time

from tests.helpers.bench import nothing_happened, quiet_raw

BODY_TIMEOUT_S = 2.0
CLOSED_WITHIN_S = 10.0  # generous against a 2 s timeout: it proves the close, not its speed
TRICKLERS = 256  # the default gateway.max_panels_in_flight: before, every slot was theirs


def head(gw, path="/v1/chat/completions", length=100_000, method="POST", close=False) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: 127.0.0.1:{gw.server.port}",
        "Content-Type: application/json",
        f"Content-Length: {length}",
        *(["Connection: close"] if close else []),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def connect(gw) -> socket.socket:
    sock = socket.create_connection((gw.server.host, gw.server.port))
    sock.settimeout(CLOSED_WITHIN_S + 5)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (a timeout here fails the test: left open)."""
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass  # closed with our bytes unread: closed all the same
    return out


class Trickle:
    """Connections sending a request head, then its body a byte a second, until told to stop
    or the gateway closes them: the slow-body attack."""

    def __init__(self, gw, count: int) -> None:
        self.socks = [connect(gw) for _ in range(count)]
        for sock in self.socks:
            sock.sendall(head(gw) + b"{")
        self.began = time.monotonic()
        self.closed_at: dict[int, float] = {}
        self.replies: dict[int, bytes] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            for i, sock in enumerate(self.socks):
                if i in self.closed_at:
                    continue
                try:
                    sock.sendall(b" ")
                except OSError:
                    self._closed(i)
            self._collect(0)

    def _collect(self, wait: float) -> None:
        """Note each connection the gateway has answered or closed."""
        open_ = [s for i, s in enumerate(self.socks) if i not in self.closed_at]
        if not open_:
            return
        readable, _, _ = select.select(open_, [], [], wait)
        for sock in readable:
            i = self.socks.index(sock)
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            self.replies[i] = self.replies.get(i, b"") + data
            if not data:
                self._closed(i)

    def _closed(self, i: int) -> None:
        self.closed_at.setdefault(i, time.monotonic() - self.began)

    def wait_closed(self, within: float) -> None:
        end = time.monotonic() + within
        while len(self.closed_at) < len(self.socks) and time.monotonic() < end:
            time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in self.socks:
            sock.close()


def test_256_trickled_bodies_do_not_turn_an_honest_panel_away(make_gateway, sim):
    gw = make_gateway(quiet_raw(sim.url, body_timeout_s=BODY_TIMEOUT_S * 3))
    attack = Trickle(gw, TRICKLERS)
    try:
        time.sleep(1.5)  # every head is in and a byte or two of every body
        assert gw.runtime.admission.panels == 0, "a body still arriving holds a panel slot"
        completion, raw = gw.ask("bench/trio")
        assert raw.http_response.status_code == 200
        seats = completion.model_extra["bench"]["seats"]
        assert [s["status"] for s in seats] == ["ok", "ok", "ok"]
        assert len(attack.closed_at) == 0  # still trickling: the panel went by them
        attack.wait_closed(BODY_TIMEOUT_S * 3 + CLOSED_WITHIN_S)
        assert len(attack.closed_at) == TRICKLERS, "a trickling connection was left open"
        assert max(attack.closed_at.values()) < BODY_TIMEOUT_S * 3 + CLOSED_WITHIN_S
    finally:
        attack.stop()
    assert gw.http.get("/healthz").json() == {"status": "ok"}
    assert len(sim.log()) == 3  # the honest panel's three seats, nothing of the attack's


def test_a_body_not_arrived_within_body_timeout_s_gets_a_408_and_is_closed(
    make_gateway, sim, tmp_path
):
    gw = make_gateway(quiet_raw(sim.url, body_timeout_s=BODY_TIMEOUT_S))
    attack = Trickle(gw, 3)
    try:
        attack.wait_closed(BODY_TIMEOUT_S + CLOSED_WITHIN_S)
        attack._collect(0.5)
    finally:
        attack.stop()
    assert len(attack.closed_at) == 3
    for closed in attack.closed_at.values():
        assert BODY_TIMEOUT_S - 0.5 < closed < BODY_TIMEOUT_S + CLOSED_WITHIN_S
    for reply in attack.replies.values():
        assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
        assert b'"code":"timeout"' in reply and b"gateway.body_timeout_s" in reply
    nothing_happened(sim, gw)


def test_a_slow_but_timely_body_is_answered(make_gateway, sim):
    gw = make_gateway(quiet_raw(sim.url, body_timeout_s=BODY_TIMEOUT_S * 2))
    body = b'{"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}'
    sock = connect(gw)
    sock.sendall(head(gw, length=len(body), close=True))
    for part in (body[:10], body[10:40], body[40:]):
        time.sleep(BODY_TIMEOUT_S / 3)
        sock.sendall(part)
    reply = read_all(sock)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:300]
    assert b'"status":"ok"' in reply


def test_a_body_nobody_waits_for_ends_its_connection_once_answered(make_gateway, sim):
    gw = make_gateway(quiet_raw(sim.url, body_timeout_s=60))
    sock = connect(gw)
    began = time.monotonic()
    sock.sendall(head(gw, "/healthz", method="GET") + b"x")
    reply = read_all(sock)  # answered, then closed, though the body is nowhere near whole
    sock.close()
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:200]
    assert b"\r\nconnection: close\r\n" in reply.lower()  # told: no next request on it
    assert time.monotonic() - began < CLOSED_WITHIN_S

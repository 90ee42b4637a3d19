"""The gateway's uvicorn server: it sleeps between once-a-second duties and wakes when told to
stop, so an idle worker spends no CPU polling (gateway/serve/server.py)."""

from __future__ import annotations

import email.utils
import socket
import threading
import time
from typing import Any

import httpx
import uvicorn

from gateway.serve.server import Server


async def hello(scope: Any, receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


def _started(tick_s: float) -> tuple[Server, threading.Thread, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(hello, log_level="warning", access_log=False, lifespan="off")
    server = Server(config, tick_s=tick_s)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_server_told_to_stop_from_another_thread_stops_without_waiting_for_its_tick() -> None:
    # An hour between ticks: only the wake-up on `should_exit` can end the main loop in time.
    server, thread, url = _started(tick_s=3600)
    assert httpx.get(url).text == "hello"
    server.should_exit = True
    thread.join(30)
    assert not thread.is_alive()
    assert server.should_exit


def test_replies_carry_a_current_date_header() -> None:
    server, thread, url = _started(tick_s=3600)
    try:
        reply = httpx.get(url)
    finally:
        server.should_exit = True
        thread.join(30)
    served = email.utils.parsedate_to_datetime(reply.headers["date"]).timestamp()
    assert abs(served - time.time()) < 120  # set at start-up, refreshed on each tick

"""A worker replaced on a reload answers what comes on the connections it has open, then closes
them: one that closed an idle keep-alive connection at once raced a client that had just sent a
request on it, which met a reset (gateway/serve/connection.py `shutdown`). A stop that is not a
replacement closes idle connections at once, as uvicorn does."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
from typing import Any

import uvicorn

from gateway.serve.connection import HeadLimitedProtocol
from gateway.serve.server import Server
from tests.helpers.clocks import wait_until

HELD = threading.Event()  # `/held`'s reply ends once it is set


async def hello(scope: Any, receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    if scope["path"] == "/held":
        await send({"type": "http.response.body", "body": b"held ", "more_body": True})
        while not HELD.is_set():
            await asyncio.sleep(0.01)
    await send({"type": "http.response.body", "body": b"hello"})


def _started() -> tuple[Server, threading.Thread, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        hello, log_level="warning", access_log=False, lifespan="off", http=HeadLimitedProtocol
    )
    server = Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=30)
    return server, thread, sock.getsockname()[1]


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def _stopped_with_a_connection_open(lingering: bool) -> tuple[http.client.HTTPConnection, int]:
    server, thread, port = _started()
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    client.request("GET", "/")
    first = client.getresponse()
    assert (first.status, first.read()) == (200, b"hello")  # kept alive, now idle
    server.lingering = lingering  # as SIGUSR1 from the supervisor sets it
    server.should_exit = True
    wait_until(lambda: _refused(port), timeout=30)  # stopped taking connections
    open_ = server.server_state.connections
    if lingering:  # each told its next request is its last
        wait_until(lambda: all(c.last_request for c in open_), timeout=30)  # type: ignore[attr-defined]
    else:  # closed
        wait_until(lambda: not open_, timeout=30)
    return client, port


def test_a_replaced_worker_answers_the_next_request_on_an_open_connection_then_closes_it():
    client, _ = _stopped_with_a_connection_open(lingering=True)
    client.request("GET", "/")
    reply = client.getresponse()
    assert (reply.status, reply.read()) == (200, b"hello")
    assert reply.getheader("connection") == "close"
    client.close()


def test_a_stop_that_is_not_a_replacement_closes_idle_connections_at_once():
    client, _ = _stopped_with_a_connection_open(lingering=False)
    try:
        client.request("GET", "/")
        client.getresponse()
    except (ConnectionError, http.client.HTTPException):
        pass  # as before: the idle connection was closed under it
    else:
        raise AssertionError("an idle connection survived a plain stop")
    finally:
        client.close()


def test_a_reply_under_way_when_a_worker_is_replaced_ends_and_the_next_request_is_answered():
    """Its head said keep-alive before the stop: a client sends its next request on it."""
    HELD.clear()
    server, _, port = _started()
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    client.request("GET", "/held")
    held = client.getresponse()  # the head is in; the body waits
    server.lingering = True
    server.should_exit = True
    wait_until(lambda: _refused(port), timeout=30)
    HELD.set()
    assert held.read() == b"held hello"
    client.request("GET", "/")
    reply = client.getresponse()
    assert (reply.status, reply.read()) == (200, b"hello")
    assert reply.getheader("connection") == "close"
    client.close()

"""A throwaway Redis for the tests: `redis-server` on a free loopback port, its folder a temp one,
nothing saved (`--save ''`, no append-only file), stopped at the end of the session. Each test
gets a database number of its own; a test may stop and start the server (same port) to see
what a replica does without it, or take `own_redis`, a server of its own to stop and start.

Not installed: these tests skip, saying how to get it; under CI (the `CI` variable) they fail.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from gateway.serve.server import free_port
from tests.helpers.installed import installed
from tests.helpers.programs import end, wait_ready

INSTALL_HINT = "Redis is not installed: apt-get install redis-server (Debian/Ubuntu)"


class RedisServer:
    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = free_port()
        self.root = tempfile.mkdtemp(prefix="bench-redis-")
        self.proc: subprocess.Popen[bytes] | None = None
        self._databases = itertools.count(1)

    def start(self) -> RedisServer:
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", self.root,
            "--save", "",
            "--appendonly", "no",
            "--databases", "64",
            "--daemonize", "no",
            "--logfile", os.path.join(self.root, "log"),
        ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        wait_ready(self.proc, self._answers, "redis-server", self.log)
        return self

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def log(self) -> str:
        try:
            with open(os.path.join(self.root, "log"), errors="replace") as file:
                return file.read()[-2000:]
        except OSError:
            return ""

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        db = next(self._databases)
        assert db < 64, "more Redis databases than the test server was started with"
        return self.url(db)

    def stop(self) -> None:
        """Stop the server (a test's outage, or the session's end); its data is gone."""
        end(self.proc)
        self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _serving() -> Iterator[RedisServer]:
    """A server, started, then stopped and removed; Redis not installed: the test skips, or
    under CI fails."""
    server = RedisServer(installed(shutil.which("redis-server"), INSTALL_HINT, "Redis")).start()
    yield server
    server.remove()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    yield from _serving()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """A fresh, empty database on the session's server (started again if a test stopped it)."""
    if redis_server.proc is None:
        redis_server.start()
    yield redis_server.new_database()


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis of this test's own, to stop and start again."""
    yield from _serving()

"""A throwaway PostgreSQL for the tests: initdb in a temp folder, a free loopback port, trust
auth, stopped and removed at the end of the session. Each test gets a database of its own.

`own_pg_server` is one a test may shut down and start again (`down`, `up`) without
disturbing the others. Not installed: these tests skip, saying how to get it; under CI (the
`CI` variable) they fail.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from gateway.serve.server import free_port
from tests.helpers.installed import installed

INSTALL_HINT = "PostgreSQL is not installed: apt-get install postgresql (Debian/Ubuntu)"


def _bin_dir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


class PgServer:
    def __init__(self, bin_dir: str) -> None:
        self.bin_dir = bin_dir
        self.port = free_port()
        self.root = tempfile.mkdtemp(prefix="bench-pg-")
        self.data = os.path.join(self.root, "data")
        self._as_postgres = os.geteuid() == 0  # PostgreSQL refuses to run as root
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._names = itertools.count(1)
        self.running = False

    def _run(self, tool: str, *args: str) -> None:
        command = [os.path.join(self.bin_dir, tool), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> PgServer:
        self._run(
            "initdb",
            "-D",
            self.data,
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        self.up()
        return self

    def up(self) -> None:
        """Serve (again: after `down`, the same data on the same port)."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            "pg_ctl",
            "-D",
            self.data,
            "-l",
            os.path.join(self.root, "log"),
            "-o",
            options,
            "-w",
            "start",
        )
        self.running = True

    def down(self) -> None:
        """Shut the server down as an operator would (`pg_ctl stop -m fast`: open sessions are
        told the server is going, and closed), keeping its data for `up`."""
        self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        self.running = False

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        import psycopg

        name = f"bench_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def stop(self) -> None:
        try:
            if self.running:
                self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _serving() -> Iterator[PgServer]:
    """A server, started, then stopped and removed; PostgreSQL not installed: the test skips,
    or under CI fails."""
    server = PgServer(installed(_bin_dir(), INSTALL_HINT, "PostgreSQL")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    yield from _serving()


@pytest.fixture
def own_pg_server() -> Iterator[PgServer]:
    """A server of this test's own, to shut down and start again mid-test."""
    yield from _serving()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, empty database on the session's server."""
    return pg_server.new_database()

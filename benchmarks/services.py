"""The shared services a replica needs, started for a benchmark: a throwaway PostgreSQL and a
throwaway Redis on loopback, each with the counters the replicas measure reads.

Why our own and not the tests' fixtures: the benchmark needs more from them than the tests do,
namely their CPU (from /proc, like every other process measured here) and their own counts of
the work done: `pg_stat_statements` (loaded at start) for statements, the rows they wrote and
the commits, Redis's `INFO commandstats` and `INFO stats` for commands, their time
inside Redis and the bytes on the wire. Both are stopped in a ``finally``; their folders are
temporary and removed.

PostgreSQL runs with `synchronous_commit=off`: a commit returns before its WAL reaches the disk,
which is the durability SQLite gives the default store (WAL with `synchronous=NORMAL`), so the
two stores are compared on like terms; `fsync` stays on.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
import redis
import targets as t

STATS_S = 1.5  # an idle backend publishes its counts within a second (PGSTAT_MIN_INTERVAL)


class Statement(NamedTuple):
    query: str  # normalised: constants as $1, $2...
    sent: bool  # by a client (else run inside another statement)
    calls: int
    rows: int
    ms: float  # time spent executing it, all calls


POSTGRES_OPTIONS = (
    "-c listen_addresses=127.0.0.1 -c synchronous_commit=off "
    "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all "
    "-c pg_stat_statements.max=1000 -c max_connections=200"
)


def _pg_bin() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb is None:
        raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql")
    return os.path.dirname(initdb)


class Postgres:
    """initdb in a temp folder, pg_ctl start on a free loopback port, trust auth."""

    def __init__(self) -> None:
        self.bin = _pg_bin()
        self.port = t.free_port()
        self.root = tempfile.mkdtemp(prefix="bench-pg-")
        self.data = os.path.join(self.root, "data")
        self.as_postgres = os.geteuid() == 0  # PostgreSQL refuses to run as root
        if self.as_postgres:
            shutil.chown(self.root, "postgres", "postgres")

    def _run(self, tool: str, *args: str) -> None:
        command = [os.path.join(self.bin, tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=300)

    def start(self) -> Postgres:
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                  "--no-locale", "--no-sync")  # fmt: skip
        options = f"-p {self.port} -k {self.root} {POSTGRES_OPTIONS}"
        log = os.path.join(self.root, "log")
        self._run("pg_ctl", "-D", self.data, "-l", log, "-o", options, "-w", "start")
        with self.admin() as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        return self

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def admin(self, db: str = "postgres") -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(db), autocommit=True)

    def new_database(self, name: str) -> str:
        with self.admin() as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())
            db.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def pid(self) -> int:
        return int(Path(self.data, "postmaster.pid").read_text().split("\n", 1)[0])

    def cpu(self) -> float:
        """CPU seconds of the postmaster and its backends, ended ones included (it reaps them)."""
        return t.cpu_seconds(self.pid())

    def reset_statements(self) -> None:
        with self.admin() as db:
            db.execute("SELECT pg_stat_statements_reset()")

    def statements(self, database: str) -> list[Statement]:
        """Each statement run in *database* since the last reset. Not sent by a client: run
        inside another, as a foreign key's check is. Counted as each statement ends, unlike
        `pg_stat_database`, which a backend publishes only when it idles (at most once a
        second) or exits."""
        with self.admin() as db:
            rows = db.execute(
                "SELECT s.query, s.toplevel, SUM(s.calls)::bigint, SUM(s.rows)::bigint, "
                "SUM(s.total_exec_time) FROM pg_stat_statements s "
                "JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = %s "
                "GROUP BY s.query, s.toplevel",
                (database,),
            ).fetchall()
        return [
            Statement(" ".join(q.split()), bool(top), int(n), int(r), float(ms))
            for q, top, n, r, ms in rows
        ]

    def transactions(self, database: str) -> int:
        """Transactions committed in *database* (`pg_stat_database`), a statement sent alone on
        an autocommit connection included, which `pg_stat_statements` cannot tell from one run
        inside BEGIN ... COMMIT. Backends publish these counts once idle for a second, so this
        first waits that long: call it with the gateways idle."""
        time.sleep(STATS_S)
        with self.admin() as db:
            row = db.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (database,)
            ).fetchone()
        return int(row[0]) if row else 0

    def rows(self, database: str) -> int:
        """Panel and seat rows stored in *database*."""
        with self.admin(database) as db:
            row = db.execute(
                "SELECT (SELECT COUNT(*) FROM panels) + (SELECT COUNT(*) FROM calls)"
            ).fetchone()
        return int(row[0]) if row else 0

    def connections(self, database: str) -> int:
        with self.admin() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchone()
        return int(row[0]) if row else 0

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        except (subprocess.SubprocessError, OSError):
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class Redis:
    """redis-server on a free loopback port, saving nothing, in a temp folder."""

    def __init__(self, work: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("Redis is not installed: apt-get install redis-server")
        self.port = t.free_port()
        self.root = tempfile.mkdtemp(prefix="bench-redis-")
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.root,
                "--save", "", "--appendonly", "no", "--daemonize", "no"]  # fmt: skip
        self.proc = t.Proc("redis", argv, work / "redis.log")
        self.client = redis.Redis(port=self.port, socket_timeout=10)
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(redis.RedisError):
                if self.client.ping():
                    break
            if time.monotonic() > deadline or self.proc.popen.poll() is not None:
                self.stop()
                raise RuntimeError(f"redis-server did not start: {self.proc.tail()}")
            time.sleep(0.05)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def empty(self) -> None:
        self.client.flushall()

    def cpu(self) -> float:
        return self.proc.cpu()

    def counts(self) -> dict[str, float]:
        """Commands by name (calls and microseconds inside Redis), commands, bytes in and out."""
        found: dict[str, float] = {}
        for name, stat in self.client.info("commandstats").items():
            command = name.removeprefix("cmdstat_")
            found[f"calls:{command}"] = float(stat["calls"])
            found[f"usec:{command}"] = float(stat["usec"])
        stats = self.client.info("stats")
        for key in ("total_commands_processed", "total_net_input_bytes", "total_net_output_bytes"):
            found[key] = float(stats[key])
        return found

    @contextlib.contextmanager
    def listening(self, channel: str, keep: int = 5000) -> Iterator[list[bytes]]:
        """The messages published on *channel* while the block runs (the first *keep*), heard
        by one more subscriber (a thread of ours), so a publication's size is known exactly."""
        heard: list[bytes] = []
        pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(**{channel: lambda m: len(heard) < keep and heard.append(m["data"])})
        thread = pubsub.run_in_thread(sleep_time=0.05, daemon=True)
        try:
            yield heard
            time.sleep(0.2)  # the last publications, still on their way
        finally:
            thread.stop()
            thread.join(5)
            pubsub.close()

    @contextlib.contextmanager
    def subscribers(self, channel: str, n: int) -> Iterator[None]:
        """*n* more subscribers to *channel* while the block runs: `redis-cli` processes reading
        every message (to /dev/null), so Redis delivers to each as it would to a replica."""
        cli = shutil.which("redis-cli") or "redis-cli"
        argv = [cli, "-p", str(self.port), "subscribe", channel]
        procs = [t.Proc("redis-cli", argv, Path(os.devnull)) for _ in range(n)]
        try:
            deadline = time.monotonic() + 10
            while self.client.pubsub_numsub(channel)[0][1] < n + 1:  # (and the replica)
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-cli subscribers did not subscribe")
                time.sleep(0.05)
            yield
        finally:
            for proc in procs:
                proc.stop()

    def stop(self) -> None:
        with contextlib.suppress(redis.RedisError):
            self.client.close()
        self.proc.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}

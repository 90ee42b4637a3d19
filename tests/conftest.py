"""Shared fixtures: the simulated upstream and gateways, each a real uvicorn server on loopback.

Nothing on the gateway's path is patched: litellm really calls the simulated upstream over
HTTP, and the official OpenAI SDK really calls the gateway.
"""

from __future__ import annotations

import os

from tests.helpers.bench import Gateway, Sim, bench_raw

# The test process owns itself: litellm offline before anything imports it (gateway/serve/process.py
# does the same for the CLI; importing `gateway` sets nothing).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import copy  # noqa: E402
import fcntl  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from gateway.app import create_app  # noqa: E402
from gateway.board import Board  # noqa: E402
from gateway.config.settings import parse_config  # noqa: E402
from gateway.serve.server import ServerThread  # noqa: E402
from simulator import create_sim_app  # noqa: E402
from tests.helpers.pg import own_pg_server, pg_server, pg_url  # noqa: E402, F401  (fixtures)
from tests.helpers.redis_server import own_redis, redis_server, redis_url  # noqa: E402, F401  (fixtures)


@pytest.fixture(autouse=True)
def cores(request, tmp_path_factory):
    """Under pytest-xdist, a test marked `alone` runs while no other worker runs one: such tests
    load every core and time /healthz meanwhile, which a neighbour's load would make them fail.
    Every other test holds the run's lock shared; an `alone` test, exclusive."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    alone = request.node.get_closest_marker("alone") is not None
    with open(tmp_path_factory.getbasetemp().parent / "cores.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        yield


@pytest.fixture(scope="session")
def sim_server():
    server = ServerThread(create_sim_app({"models": {"*": {"latency_s": 0.01}}})).start()
    yield Sim(server)
    server.stop()


@pytest.fixture
def sim(sim_server):
    """The shared simulated upstream, with its behaviours and request log cleared."""
    sim_server.state.reset()
    return sim_server


@pytest.fixture
def make_gateway(sim, tmp_path: Path):
    started: list[Gateway] = []

    def make(
        raw: dict[str, Any] | None = None,
        store: Path | str | None = None,
        board: Path | None = None,
        clock: Callable[[], float] | None = None,
        state: str | None = None,
        **gateway: Any,
    ):
        """*board*: a board file to share with other gateways, as workers do; *clock*: the
        gateway's time (cooldowns, rpm windows, records), the wall clock unless given; *store*:
        a SQLite file, or a store's URL (postgresql://...); *state*: a live state's URL
        (redis://...)."""
        raw = copy.deepcopy(raw) if raw is not None else bench_raw(sim.url, **gateway)
        if isinstance(store, str):
            raw["store"] = store
        else:
            raw["store"] = f"sqlite:///{store or tmp_path / 'records.db'}"
        if state is not None:
            raw["state"] = state
        config = parse_config(raw, base=tmp_path)
        shared = Board.attach(board) if board is not None else None
        gw = Gateway(ServerThread(create_app(config, board=shared, clock=clock)).start(), config)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        gw.close()
        gw.runtime.board.close()


@pytest.fixture
def gateway(make_gateway):
    return make_gateway()

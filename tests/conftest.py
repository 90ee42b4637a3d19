"""Shared fixtures: the simulated upstream and gateways, each a real uvicorn server on loopback.

Nothing on the gateway's path is patched: litellm really calls the simulated upstream over
HTTP, and the official OpenAI SDK really calls the gateway.
"""

from __future__ import annotations

import os

# The test process owns itself: litellm offline before anything imports it (gateway/serve/process.py
# does the same for the CLI; importing `gateway` sets nothing).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import copy  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import openai  # noqa: E402
import pytest  # noqa: E402

from gateway.app import create_app  # noqa: E402
from gateway.config.settings import parse_config  # noqa: E402
from gateway.serve.server import ServerThread  # noqa: E402
from gateway.state.board import Board  # noqa: E402
from simulator import create_sim_app  # noqa: E402
from tests.pg import own_pg_server, pg_server, pg_url  # noqa: E402, F401  (fixtures)
from tests.redis_server import own_redis, redis_server, redis_url  # noqa: E402, F401  (fixtures)

# alias -> (served name, connection, role)
MODELS = {
    "alpha": ("sim-alpha", "one", "general"),
    "beta": ("sim-beta", "one", "general"),
    "gamma": ("sim-gamma", "two", "code"),
    "delta": ("sim-delta", "two", "general"),
    "epsilon": ("sim-epsilon", "three", "general"),
    "zeta": ("sim-zeta", "three", "light"),
}


class Sim:
    def __init__(self, server: ServerThread) -> None:
        self.server = server
        self.state = server.server.config.app.state.sim
        self.url = server.url

    def set(self, served: str, **behaviour: Any) -> None:
        self.state.set(served, **behaviour)

    def log(self, served: str | None = None) -> list[dict]:
        if served is None:
            return list(self.state.requests)
        return self.state.log_for(served)


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


def bench_raw(sim_url: str, **gateway: Any) -> dict[str, Any]:
    """The test bench: six models on three connections, a few collections."""
    model_list = [
        {
            "model_name": alias,
            "litellm_params": {
                "model": f"openai/{served}",
                "api_base": f"{sim_url}/v1",
                "api_key": "sim-key",
            },
            "bench": {"connection": connection, "role": role},
        }
        for alias, (served, connection, role) in MODELS.items()
    ]
    return {
        "model_list": model_list,
        "collections": {
            "trio": {"members": ["alpha", "gamma", "delta"], "description": "three members"},
            "solo": {"members": ["alpha"], "description": "one member", "shape": "design"},
            "reviewers": {"members": ["alpha"], "shape": "review", "tags": ["review"]},
        },
        "gateway": {"seat_timeout_s": 5, **gateway},
    }


def seeing_raw(sim_url: str) -> dict:
    """The test bench plus two models that can see: one by role, one by the vision fact."""
    raw = bench_raw(sim_url)
    for alias, fact in (("eye", {"role": "vision"}), ("seer", {"vision": True})):
        raw["model_list"].append(
            {
                "model_name": alias,
                "litellm_params": {
                    "model": f"openai/sim-{alias}",
                    "api_base": f"{sim_url}/v1",
                    "api_key": "sim-key",
                },
                "bench": {"connection": "four", **fact},
            }
        )
    raw["collections"]["looks"] = {"members": ["alpha", "eye"], "description": "eyes"}
    return raw


class Gateway:
    def __init__(self, server: ServerThread, config) -> None:
        self.server = server
        self.url = server.url
        self.config = config
        self.runtime = server.server.config.app.state.runtime
        self.client = openai.OpenAI(
            base_url=f"{self.url}/v1", api_key="local", max_retries=0, timeout=30
        )
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def ask(self, model: str = "bench/trio", content: str = "Is this code right?", **kw):
        """A panel through the OpenAI SDK; returns (completion, raw response)."""
        raw = self.client.chat.completions.with_raw_response.create(
            model=model, messages=[{"role": "user", "content": content}], **kw
        )
        return raw.parse(), raw

    def close(self) -> None:
        self.http.close()
        self.client.close()
        self.server.stop()


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


def served(alias: str) -> str:
    return MODELS[alias][0]

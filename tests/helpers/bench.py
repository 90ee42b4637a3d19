"""The test bench every gateway test shares: six models on three connections behind the
simulated upstream, the collections they sit in, a gateway on a real uvicorn server with the
official OpenAI SDK pointed at it, and the checks many tests make (a refusal that reached nothing,
an OpenAI-shaped error, explorers rotating, /healthz answering while a heavy body is read)."""

from __future__ import annotations

import base64
import functools
import sqlite3
import ssl
import threading
import time
from typing import Any

import httpx
import openai

from gateway.serve.server import ServerThread

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


@functools.cache
def tls() -> ssl.SSLContext:
    """The TLS context every test client shares (`verify=`): the default one, made once. Each
    client made its own, loading the CA bundle again (0.1-0.3 s of CPU), and the suite makes
    two for each of its ~700 gateways. (Their traffic is loopback HTTP: it is never used.)"""
    return httpx.create_ssl_context()


class Gateway:
    def __init__(self, server: ServerThread, config) -> None:
        self.server = server
        self.url = server.url
        self.config = config
        self.runtime = server.server.config.app.state.runtime
        self.client = openai.OpenAI(
            base_url=f"{self.url}/v1",
            api_key="local",
            max_retries=0,
            timeout=30,
            http_client=openai.DefaultHttpxClient(verify=tls()),
        )
        self.http = httpx.Client(base_url=self.url, timeout=30, verify=tls())

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


def served(alias: str) -> str:
    return MODELS[alias][0]


# A pool of six general models explores around one ad-hoc anchor member.
POOL = [f"p{i}" for i in range(6)]


def pool_raw(sim_url: str, **gateway):
    raw = bench_raw(sim_url, **gateway)
    base = raw["model_list"][0]["litellm_params"]["api_base"]
    raw["model_list"] = [
        {
            "model_name": "anchor",
            "litellm_params": {"model": "openai/sim-anchor", "api_base": base, "api_key": "k"},
            "bench": {"connection": "one", "ad_hoc": True},
        }
    ] + [
        {
            "model_name": alias,
            "litellm_params": {"model": f"openai/sim-{alias}", "api_base": base, "api_key": "k"},
            "bench": {"connection": f"c{i % 3}"},
        }
        for i, alias in enumerate(POOL)
    ]
    raw["collections"] = {"anchored": {"members": ["anchor"]}}
    return raw


def explorers(completion) -> list[str]:
    seats = completion.model_extra["bench"]["seats"]
    return [s["alias"] for s in seats if s["seat"].startswith("explorer")]


def nothing_happened(sim, where) -> None:
    """A refused request reached no upstream and wrote no record. *where*: the gateway, or the
    path of its SQLite store."""
    if isinstance(where, Gateway):
        where = where.config.store.removeprefix("sqlite:///")
    assert sim.log() == [], "a refused request reached the upstream"
    with sqlite3.connect(where) as db:
        assert db.execute("SELECT COUNT(*) FROM panels").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 0


def assert_openai_error(response, status: int) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    return error


def streamed_in_finish_order(gw, panel: str, text: str) -> bool:
    """The seat sections came in the order the seats finished, as the records have it."""
    seats = gw.http.get(f"/bench/panels/{panel}").json()["seats"]
    by_finish = [s["alias"] for s in sorted(seats, key=lambda s: s["finished"])]
    return sorted(by_finish, key=lambda alias: text.index(f" — {alias}\n")) == by_finish


WORST_HEALTH_S = 0.5  # generous: an ordinary /healthz answers in a few milliseconds


def while_polling_health(gateway, send):
    """Run *send* in a thread while /healthz is polled; (its response, the worst health time)."""
    answer: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: answer.append(send()))
    worst = 0.0
    with httpx.Client(base_url=gateway.url, timeout=30) as health:
        sender.start()
        while sender.is_alive():
            began = time.perf_counter()
            assert health.get("/healthz").status_code == 200
            worst = max(worst, time.perf_counter() - began)
            time.sleep(0.01)
    sender.join()
    return answer[0], worst


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()  # the smallest PNG head


def quiet_raw(sim_url: str, **gateway: Any) -> dict[str, Any]:
    """trio with no explorers or reserves: exactly its three members are called."""
    return bench_raw(sim_url, **{"max_explorers": 0, "reserves": 0, **gateway})

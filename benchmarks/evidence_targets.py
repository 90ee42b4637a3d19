"""The two gateways the learning benchmark drives, behind one small interface.

Both run as real subprocesses against the same simulated upstream (targets.py, rivals.py start
them the same way for the speed comparison). Each target answers two questions, `panel()` (who
sat, who answered, under which call ids) and `verdict()`, and can be restarted with a new list of
models while its records stay, which is what the discovery scenario needs.

Our gateway is asked for `bench/panel` (primary, second opinion, two explorers, reserves). The
seed (Benchwarmers 0.3.3) has no router panel on its gateway: its `route.py` primary reads suite
scores, never verdicts, and a collection call seats members plus explorers only. So the seed's
"panel" is two requests, both real routes of its gateway: a collection with no members (its two
explorer seats, chosen by `route.py`'s day-granular staleness) and a turn of route mode over every
model (the one place its gateway ranks models by useful verdicts). The route turn's model stands
for the seed's primary.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
from setup_envs import venv_bin
from targets import OFFLINE_ENV, Proc, free_port, start_ours


@dataclass(frozen=True)
class Seat:
    seat: str  # primary, second, explorer1, reserve1, ... (seed: explorer, explorer2, route)
    alias: str
    status: str
    call: str


def served(alias: str) -> str:
    return f"sim-{alias}"


class Ours:
    name = "ours"

    def __init__(self, work: Path, sim: str, store: Path) -> None:
        self.work, self.sim, self.store = work, sim, store
        self.proc: Proc | None = None
        self.client = httpx.Client(timeout=60)
        self.url = ""

    def start(self, aliases: list[str]) -> None:
        self.stop()
        model_list = [
            {
                "model_name": a,
                "litellm_params": {
                    "model": f"openai/{served(a)}",
                    "api_base": f"{self.sim}/v1",
                    "api_key": "sim",
                },
                "bench": {"connection": f"c{i % 5}", "role": "general"},
            }
            for i, a in enumerate(aliases)
        ]
        config = {
            "model_list": model_list,
            "collections": {"all": {"members": aliases[:1], "description": "unused"}},
            "gateway": {
                "max_calls": 4,
                "max_explorers": 2,
                "reserves": 2,
                "seat_timeout_s": 30,
                "cooldown_default_s": 1,
            },
            "store": f"sqlite:///{self.store}",
        }
        path = self.work / f"ours-{secrets.token_hex(3)}.yaml"
        path.write_text(json.dumps(config, indent=1))
        self.proc, self.url = start_ours(self.work, path, workers=1)

    def panel(self, n: int) -> list[Seat]:
        body = {"model": "bench/panel", "messages": [{"role": "user", "content": f"task {n}"}]}
        r = self.client.post(f"{self.url}/v1/chat/completions", json=body)
        if r.status_code not in (200, 429, 502):
            raise RuntimeError(f"panel {n}: {r.status_code} {r.text[:300]}")
        seats = r.json().get("bench", {}).get("seats") or r.json()["error"].get("bench", {})
        return [Seat(s["seat"], s["alias"], s["status"], s["call"]) for s in seats]

    def verdict(self, call: str, useful: bool) -> None:
        r = self.client.post(f"{self.url}/bench/verdict", json={"call": call, "useful": useful})
        r.raise_for_status()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None


class Seed:
    name = "seed"

    def __init__(self, work: Path, sim: str) -> None:
        self.work, self.sim = work, sim
        self.home = work / f"seed-home-{secrets.token_hex(3)}"
        self.env = {
            "BENCHWARMERS_HOME": str(self.home),
            "LLM_USER_PATH": str(self.home / "llm"),
            "XDG_CONFIG_HOME": str(self.home / "xdg-config"),
            "XDG_DATA_HOME": str(self.home / "xdg-data"),
            "BENCHWARMERS_KEY_SIM": "sim-key",
            "BENCH_CLIENT": "builtin",
            "BENCH_BIND": "127.0.0.1",
            **OFFLINE_ENV,
        }
        self.proc: Proc | None = None
        self.client = httpx.Client(timeout=60)
        self.url = ""
        init = [str(venv_bin("seed", "benchwarmers")), "init", str(self.home), "--endpoint", "sim"]
        subprocess.run(
            [*init, f"{sim}/v1"],
            env={**os.environ, **self.env},
            check=True,
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def start(self, aliases: list[str]) -> None:
        """Register *aliases* in the llm-style yaml its client reads; two collections: `explore`
        (no members, so both seats are explorers) and `route` (every model, route mode)."""
        self.stop()
        blocks = [
            f'- model_id: {a}\n  model_name: {served(a)}\n  api_base: "{self.sim}/v1"\n'
            "  api_key_name: sim\n"
            for a in aliases
        ]
        config = self.home / "config"
        (config / "extra-openai-models.yaml").write_text("\n".join(blocks))
        common = {"shape": "general", "tags": [], "merger": ""}
        collections = {
            "explore": {"members": [], "description": "explorers only", "reply": "all", **common},
            "route": {"members": aliases, "description": "route mode", "reply": "route", **common},
        }
        (config / "collections.json").write_text(json.dumps(collections))
        port = free_port()
        env = {**self.env, "BENCH_GATEWAY_PORT": str(port)}
        argv = [str(venv_bin("seed", "benchwarmers")), "gateway"]
        self.proc = Proc("benchwarmers", argv, self.work / "seed.log", env=env, cwd=self.home)
        self.url = f"http://127.0.0.1:{port}"
        try:
            self.proc.wait_ready(self.url + "/v1/models", timeout=90)
        except BaseException:
            self.stop()
            raise

    def panel(self, n: int) -> list[Seat]:
        seats: list[Seat] = []
        body = {"model": "bench/explore", "messages": [{"role": "user", "content": f"task {n}"}]}
        r = self.client.post(f"{self.url}/v1/chat/completions", json=body)
        if r.status_code == 200:
            for s in r.json()["bench"]["seats"]:
                seats.append(Seat(s["seat"], s["alias"], s["status"], s["call"]))
        body = {"model": "bench/route", "messages": [{"role": "user", "content": f"turn {n}"}]}
        r = self.client.post(f"{self.url}/v1/chat/completions", json=body)
        if r.status_code == 200:
            bench = r.json()["bench"]
            seats.insert(0, Seat("route", bench["alias"], "ok", bench["call"]))
        return seats

    def verdict(self, call: str, useful: bool) -> None:
        r = self.client.post(f"{self.url}/bench/verdict", json={"call": call, "useful": useful})
        if r.status_code != 200:
            raise RuntimeError(f"the seed refused a verdict on {call}: {r.status_code} {r.text}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

"""The learning benchmark's machinery on a tiny bench: hidden qualities, the judge, verdicts
through the real gateway, and the direction the records must move the router's primary."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from evidence import World, primary_of  # noqa: E402
from evidence_targets import Seat, served  # noqa: E402


class InProcess:
    """The benchmark's target interface over a gateway the test fixtures started."""

    def __init__(self, gateway) -> None:
        self.http = gateway.http

    def panel(self, n: int) -> list[Seat]:
        body = {"model": "bench/panel", "messages": [{"role": "user", "content": f"task {n}"}]}
        reply = self.http.post("/v1/chat/completions", json=body)
        assert reply.status_code == 200, reply.text
        return [
            Seat(s["seat"], s["alias"], s["status"], s["call"])
            for s in reply.json()["bench"]["seats"]
        ]

    def verdict(self, call: str, useful: bool) -> None:
        self.http.post("/bench/verdict", json={"call": call, "useful": useful}).raise_for_status()


def bench(sim_url: str, aliases: list[str]) -> dict:
    return {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {
                    "model": f"openai/{served(alias)}",
                    "api_base": f"{sim_url}/v1",
                    "api_key": "sim-key",
                },
                "bench": {"connection": f"c{i % 3}"},
            }
            for i, alias in enumerate(aliases)
        ],
        "collections": {"any": {"members": aliases[:1]}},
        "gateway": {"max_calls": 4, "max_explorers": 2, "reserves": 2},
    }


@pytest.mark.parametrize("seed", [3, 11])
def test_judged_panels_make_the_best_model_primary(make_gateway, sim, seed):
    world = World(seed, sim.url, share=1.0, n=6)
    target = InProcess(make_gateway(bench(sim.url, sorted(world.quality))))
    primaries = []
    for n in range(1, 41):
        seats = target.panel(n)
        given = world.judge(target, seats)
        assert all(seat.alias != world.silent for seat, _ in given)
        primaries.append(primary_of(seats))
    best = max(world.quality, key=world.quality.__getitem__)
    assert sum(p == best for p in primaries[-10:]) >= 8, primaries
    assert set(primaries[-10:]) <= world.best(), primaries
    # the router's figures are the judge's verdicts, nothing else
    models = {m["alias"]: m for m in target.http.get("/bench/models").json()["models"]}
    for alias, verdicts in world.judged.items():
        assert models[alias]["judged"] == len(verdicts)
        assert models[alias]["useful"] == sum(verdicts)
    assert models[world.silent]["judged"] == 0 and models[world.silent]["seated"] > 0


def test_the_learned_primary_survives_a_restart(make_gateway, sim, tmp_path):
    world = World(5, sim.url, share=1.0, n=6)
    raw = bench(sim.url, sorted(world.quality))
    store = tmp_path / "kept.db"
    first = make_gateway(raw, store=store)
    target = InProcess(first)
    for n in range(1, 31):
        world.judge(target, target.panel(n))
    before = primary_of(target.panel(31))
    first.close()
    again = InProcess(make_gateway(raw, store=store))
    assert primary_of(again.panel(32)) == before
    assert before in world.best()

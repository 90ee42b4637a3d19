"""Two replicas behave as one gateway (contract §15): two `bench-gateway serve` processes on two
ports, one worker each, each on a config file of its own naming the same PostgreSQL store and
the same Redis state, and sharing nothing else. The simulated upstream counts every call.

The replicas start once for the module (a start costs seconds); each test asks what it needs
of them. The last test stops Redis under them and starts it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from gateway.access.keys import key_record, new_key
from gateway.config.settings import parse_config
from gateway.store.open import open_store
from tests.helpers.bench import explorers, pool_raw
from tests.helpers.clocks import wait_until
from tests.helpers.replicas import Replica


def replicas_raw(sim_url: str, store: str, state: str) -> dict[str, Any]:
    """The rotation pool around `anchored`, plus `lone` (one member of its own) and `crew`
    (route mode over two of the pool)."""
    raw = pool_raw(sim_url, require_keys=True, seat_timeout_s=10, workers=1)
    base = raw["model_list"][0]["litellm_params"]["api_base"]
    raw["model_list"].append(
        {
            "model_name": "lone",
            "litellm_params": {"model": "openai/sim-lone", "api_base": base, "api_key": "k"},
            "bench": {"connection": "c9", "ad_hoc": True},
        }
    )
    raw["collections"]["lone"] = {"members": ["lone"]}
    raw["collections"]["crew"] = {"members": ["p0", "p1"], "reply": "route"}
    return {**raw, "store": store, "state": state}


async def _add_keys(config: Any, keys: dict[str, tuple[str, int | None]]) -> None:
    store = open_store(config.store)
    await store.open()
    try:
        for name, (key, rpm) in keys.items():
            assert await store.add_key(key_record(name, key, None, rpm))
    finally:
        await store.close()


@pytest.fixture(scope="module")
def pair(sim_server, pg_server, redis_server, tmp_path_factory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("replicas")
    if redis_server.proc is None:
        redis_server.start()
    raw = replicas_raw(sim_server.url, pg_server.new_database(), redis_server.new_database())
    team, capped = new_key(), new_key()
    config = parse_config(raw, base=folder)
    asyncio.run(_add_keys(config, {"team": (team, None), "capped": (capped, 2)}))
    started = []
    for name in ("a", "b"):
        path = folder / f"{name}.yaml"  # a config file of its own, naming the same services
        path.write_text(yaml.safe_dump(raw))
        started.append(Replica(path, folder / f"{name}.log", team))
    try:
        for replica in started:
            replica.launch()
        for replica in started:
            replica.wait_ready()
        yield {"a": started[0], "b": started[1], "capped": capped}
    finally:
        for replica in started:
            replica.stop()


def test_a_panel_answered_on_one_is_read_on_the_other(pair, sim):
    completion = pair["a"].ask()
    panel = completion.model_extra["bench"]["panel"]
    record = pair["b"].http.get(f"/bench/panels/{panel}").json()
    assert [s["status"] for s in record["seats"]] == ["ok"] * 3
    assert {s["alias"] for s in record["seats"]} == {"anchor", *explorers(completion)}


def test_explorers_rotate_across_both(pair, sim):
    first = explorers(pair["a"].ask())
    second = explorers(pair["b"].ask())
    third = explorers(pair["a"].ask())
    assert len(set(first + second)) == 4 and len(set(second + third)) == 4


def test_a_verdict_on_one_counts_on_the_other(pair, sim):
    def judged(alias: str) -> int:
        models = pair["b"].http.get("/bench/models").json()["models"]
        return int(next(m["judged"] for m in models if m["alias"] == alias))

    seat = pair["a"].ask().model_extra["bench"]["seats"][1]
    before = judged(seat["alias"])
    verdict = pair["a"].http.post("/bench/verdict", json={"call": seat["call"], "useful": True})
    assert verdict.json() == {"call": seat["call"], "recorded": True}
    assert judged(seat["alias"]) == before + 1


def test_a_keys_rpm_is_spent_across_both(pair, sim):
    key = pair["capped"]
    body = {"model": "bench/lone", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"Authorization": f"Bearer {key}"}
    answers = [
        httpx.post(f"{pair[name].url}/v1/chat/completions", json=body, headers=headers, timeout=30)
        for name in ("a", "b", "a", "b")
    ]
    assert [r.status_code for r in answers] == [200, 200, 429, 429]
    assert int(answers[2].headers["Retry-After"]) >= 1
    assert "over its 2 requests per minute" in answers[3].json()["error"]["message"]


def test_a_429_seen_by_one_is_never_called_again_by_the_other(pair, sim):
    sim.set("sim-lone", status=429, retry_after=600)
    first = pair["a"].ask("bench/lone").model_extra["bench"]["seats"][0]
    assert (first["alias"], first["status"]) == ("lone", "rate_limited")
    for _ in range(3):
        seat = pair["b"].ask("bench/lone").model_extra["bench"]["seats"][0]
        assert (seat["alias"], seat["status"]) == ("lone", "cooling")
    assert len(sim.log("sim-lone")) == 1


def test_a_route_conversation_started_on_one_continues_on_the_other(pair, sim):
    messages = [{"role": "user", "content": "plan the trip"}]
    model = "bench/crew:route"
    first = pair["a"].client.chat.completions.create(model=model, messages=messages)
    messages += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "and the hotel?"},
    ]
    later = pair["b"].client.chat.completions.create(model=model, messages=messages)
    began, went_on = first.model_extra["bench"], later.model_extra["bench"]
    assert went_on["conversation"] == began["conversation"]
    assert (went_on["alias"], went_on["turn"]) == (began["alias"], 2)


def test_redis_stopped_keeps_panels_answered_and_healthz_degraded_until_it_is_back(
    pair, sim, redis_server
):
    replicas = (pair["a"], pair["b"])
    redis_server.stop()
    try:
        for replica in replicas * 2:
            seats = replica.ask().model_extra["bench"]["seats"]
            assert [s["status"] for s in seats] == ["ok"] * 3
        for replica in replicas:
            health = replica.health()
            assert health["status"] == "degraded" and "unreachable" in health["degraded"]["state"]
    finally:
        redis_server.start()  # empty, on the same port
    for replica in replicas:
        wait_until(lambda r=replica: r.health()["status"] == "ok", timeout=20)
    second = explorers(pair["b"].ask())  # one gateway again: b rotates past a's panel
    assert not set(second) & set(explorers(pair["a"].ask()))

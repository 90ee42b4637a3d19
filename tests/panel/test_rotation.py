"""Explorer rotation through the real gateway: sequential panels and concurrent ones."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from tests.helpers.bench import POOL, explorers, pool_raw


def test_sequential_panels_rotate_explorers_through_the_whole_pool(make_gateway, sim):
    gw = make_gateway(pool_raw(sim.url))
    seen = [explorers(gw.ask("bench/anchored")[0]) for _ in range(3)]
    assert sorted(a for pair in seen for a in pair) == sorted(POOL)
    # the fourth panel goes back to the two that have waited longest: the first panel's
    assert sorted(explorers(gw.ask("bench/anchored")[0])) == sorted(seen[0])


def test_concurrent_panels_seat_different_explorers(make_gateway, sim):
    gw = make_gateway(pool_raw(sim.url))
    sim.set("*", latency_s=0.5)  # all six panels are in flight together
    with ThreadPoolExecutor(6) as pool:
        completions = list(pool.map(lambda _: gw.ask("bench/anchored")[0], range(6)))
    counts = Counter(a for c in completions for a in explorers(c))
    assert counts == {alias: 2 for alias in POOL}
    # the upstream saw the same spread
    upstream = Counter(r["model"] for r in sim.log() if r["model"] != "sim-anchor")
    assert upstream == {served_name: 2 for served_name in (f"sim-{a}" for a in POOL)}


def test_rotation_survives_a_restart(make_gateway, sim, tmp_path):
    store = tmp_path / "rotation.db"
    first = make_gateway(pool_raw(sim.url), store=store)
    before = [explorers(first.ask("bench/anchored")[0]) for _ in range(2)]
    first.close()
    second = make_gateway(pool_raw(sim.url), store=store)
    after = explorers(second.ask("bench/anchored")[0])
    used = {a for pair in before for a in pair}
    assert set(after) == set(POOL) - used


def test_an_ad_hoc_model_is_seated_only_when_named(make_gateway, sim):
    gw = make_gateway(pool_raw(sim.url))
    completion, _ = gw.ask("bench/panel")
    assert "anchor" not in {s["alias"] for s in completion.model_extra["bench"]["seats"]}
    completion, _ = gw.ask("bench/panel", extra_body={"with": ["anchor"]})
    seats = completion.model_extra["bench"]["seats"]
    assert "anchor" in {s["alias"] for s in seats}
    assert any("ad hoc" in note for note in completion.model_extra["bench"]["notes"])

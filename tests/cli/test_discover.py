"""`bench-gateway models discover` (contract §19): the real command in a subprocess, on a real
config file, reading the simulated provider's own listing (no gateway running)."""

from __future__ import annotations

import datetime
import json

import httpx
import pytest
import yaml

from gateway.serve.server import ServerThread, free_port
from simulator import create_sim_app
from tests.cli.test_client import bench
from tests.helpers.bench import bench_raw

SPEC = {
    "models": {
        "sim-alpha": {"listing": {"free": True, "context_length": 131072, "tools": True}},
        "sim-beta": {"listing": False},
        "sim-gamma": {"listing": {"free": True, "expires_in_days": 2}},
        "sim-delta": {"listing": {"free": False, "expires_in_days": 40}},
        "sim-epsilon": {},
        "sim-zeta": {},
        "nemotron-nano": {"listing": {"free": True, "context_length": 128000, "tools": False}},
        "big-paid": {"listing": {"free": False, "context_length": 200000, "expires_in_days": 9}},
    }
}


def day(offset: int) -> str:
    return (datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(offset)).isoformat()


@pytest.fixture(scope="module")
def sim():
    server = ServerThread(create_sim_app(SPEC)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def config(sim, tmp_path_factory):
    """Connections one and two read the simulator's listing; three is not a listing's."""
    raw = bench_raw(sim.url)
    raw["connections"] = {"one": {"listing": True}, "two": {"listing": True}, "three": {}}
    path = tmp_path_factory.mktemp("discover") / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_discover_prints_what_each_connection_serves_lacks_and_lets_expire(sim, config):
    done = bench("models", "discover", "--config", str(config))
    assert done.returncode == 0, done.stderr
    url = f"{sim.url}/v1/models"
    served = [
        "  served, not on the bench:",
        f"    {'nemotron-nano':<40} free, context 128000, no tools",
        f"    {'big-paid':<40} paid, context 200000, expires {day(9)}",
    ]
    assert done.stdout.splitlines() == [
        f"one: 7 models listed at {url}",
        *served,
        "  on the bench, not listed:",
        "    beta (sim-beta)",
        "  expiring soon: none",
        "",
        "three: no listing read (not a provider known to list its models; `listing: true` on "
        "the connection reads {api_base}/models)",
        "",
        f"two: 7 models listed at {url}",
        *served,
        "  on the bench, not listed: none",
        "  expiring soon:",
        f"    gamma expires on {day(2)} (in 2 days)",
    ]


def test_discover_as_json_states_each_entry(sim, config):
    done = bench("models", "discover", "--config", str(config), "--connection", "two", "--json")
    assert done.returncode == 0, done.stderr
    (two,) = json.loads(done.stdout)["connections"]
    assert (two["connection"], two["url"], two["error"], two["listed"]) == (
        "two", f"{sim.url}/v1/models", None, 7
    )  # fmt: skip
    assert two["served"] == [
        {"id": "nemotron-nano", "canonical_slug": None, "context_length": 128000,
         "free": True, "expires": None, "tools": False},
        {"id": "big-paid", "canonical_slug": None, "context_length": 200000,
         "free": False, "expires": day(9), "tools": None},
    ]  # fmt: skip
    assert two["missing"] == []
    assert two["expiring"] == [{"alias": "gamma", "expires": day(2), "days": 2}]


def test_a_refused_key_is_named_per_connection_without_a_traceback(sim, config):
    httpx.post(f"{sim.url}/_sim/listing", json={"status": 401}).raise_for_status()
    try:
        done = bench("models", "discover", "--config", str(config), "--connection", "one")
    finally:
        httpx.post(f"{sim.url}/_sim/listing", json={}).raise_for_status()
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"one: the listing at {sim.url}/v1/models was refused (401): the key was not accepted"
    ]
    assert "Traceback" not in done.stderr


def test_an_unreachable_provider_is_named_and_the_rest_still_shown(sim, tmp_path):
    raw = bench_raw(sim.url)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    for entry in raw["model_list"][:2]:  # connection one's models, on a port nobody serves
        entry["litellm_params"]["api_base"] = dead
    raw["connections"] = {"one": {"listing": True}, "two": {"listing": True}, "three": {}}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    done = bench("models", "discover", "--config", str(path))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"one: the listing at {dead}/models could not be reached: ")
    assert f"two: 7 models listed at {sim.url}/v1/models" in lines
    assert "Traceback" not in done.stderr


def test_a_stray_word_is_a_usage_error(config):
    done = bench("models", "discover", "glm", "--config", str(config))
    assert done.returncode == 2
    assert done.stderr.strip() == "bench-gateway models discover: unexpected 'glm'"


def test_an_unknown_connection_is_a_usage_error(config):
    done = bench("models", "discover", "--config", str(config), "--connection", "nine")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"bench-gateway models discover: no connection 'nine' in {config}; "
        "its connections: one, three, two"
    )
    assert done.stdout == ""


def test_a_config_it_refuses_is_named(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text("model_list: []\nconnections: {one: {listing: maybe}}\n")
    done = bench("models", "discover", "--config", str(path))
    assert done.returncode == 1
    assert "connections.one.listing" in done.stderr and "Traceback" not in done.stderr

"""Gateway keys: created once, stored as digests, required when configured, scoped, rate limited."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest
import yaml

from tests.conftest import bench_raw, served

ROOT = Path(__file__).parents[1]


@pytest.fixture
def keyed(make_gateway, sim, tmp_path):
    """A gateway that requires keys, and a `keys` command on the same config and store."""
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))

    def keys(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "gateway.cli", "keys", *args, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )

    gw = make_gateway(raw)
    return gw, keys


def create(keys, *args) -> str:
    result = keys("create", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def post(gw, key=None, model="bench/trio", header="authorization"):
    headers = {}
    if key is not None:
        headers = {header: f"Bearer {key}" if header == "authorization" else key}
    return gw.http.post(
        "/v1/chat/completions",
        json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
    )


def test_a_key_is_shown_once_and_only_its_digest_is_stored(keyed, tmp_path):
    gw, keys = keyed
    key = create(keys, "ci-bot")
    assert key.startswith("bwk_") and len(key) == 4 + 43
    listing = keys("list")
    assert listing.returncode == 0 and "ci-bot" in listing.stdout
    assert f"...{key[-4:]}" in listing.stdout and key not in listing.stdout
    post(gw, key)  # use it once, so it is written to records too
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("records.db*"))
    assert key.encode() not in stored
    assert keys("create", "ci-bot").returncode == 1  # names are unique


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_a_valid_key_is_accepted_either_way_and_named_on_the_panel(keyed, header):
    gw, keys = keyed
    key = create(keys, "alice")
    response = post(gw, key, header=header)
    assert response.status_code == 200
    panel = gw.http.get(
        f"/bench/panels/{response.json()['bench']['panel']}", headers={"x-api-key": key}
    ).json()
    assert panel["key_name"] == "alice"


def test_the_openai_sdk_sends_the_key_as_a_bearer_token(keyed):
    gw, keys = keyed
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=create(keys, "sdk"), max_retries=0)
    completion = client.chat.completions.create(
        model="bench/trio", messages=[{"role": "user", "content": "hi"}]
    )
    assert completion.model_extra["bench"]["seats"][0]["status"] == "ok"


@pytest.mark.parametrize(
    "key, says",
    [
        (None, "No gateway key"),
        ("sk-not-ours", "Malformed"),
        ("bwk_" + "A" * 43, "Unknown"),
    ],
)
def test_missing_malformed_and_unknown_keys_are_401_saying_which(keyed, sim, key, says):
    gw, _ = keyed
    for path in ("/v1/models", "/bench/models", "/bench/calls/p1.member1"):
        headers = {"authorization": f"Bearer {key}"} if key else {}
        response = gw.http.get(path, headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert says in response.json()["error"]["message"]
    assert post(gw, key).status_code == 401
    assert sim.log() == []
    assert gw.http.get("/healthz").status_code == 200  # health needs no key


def test_a_revoked_key_is_refused(keyed):
    gw, keys = keyed
    key = create(keys, "old")
    assert keys("revoke", "old").returncode == 0
    assert keys("revoke", "old").returncode == 1
    time.sleep(2.1)  # the gateway trusts a looked-up key for 2 s
    assert post(gw, key).status_code == 401


def test_a_scoped_key_sees_and_uses_only_its_collections(keyed, sim):
    gw, keys = keyed
    scoped = create(keys, "solo-only", "--collections", "solo")
    full = create(keys, "admin")
    headers = {"x-api-key": scoped}
    listed = gw.http.get("/v1/models", headers=headers).json()["data"]
    assert {m["id"] for m in listed} == {"bench/solo", "bench/solo:merged"}

    refused = post(gw, scoped, model="bench/trio")
    assert refused.status_code == 403 and "solo" in refused.json()["error"]["message"]
    assert sim.log() == []
    assert post(gw, scoped, model="bench/solo").status_code == 200

    other = post(gw, full, model="bench/trio").json()["bench"]["seats"][0]["call"]
    assert gw.http.get(f"/bench/calls/{other}", headers=headers).status_code == 403
    verdict = gw.http.post("/bench/verdict", json={"call": other, "useful": True}, headers=headers)
    assert verdict.status_code == 403
    assert gw.http.get(f"/bench/panels/{other.split('.')[0]}", headers=headers).status_code == 403


def test_a_key_over_its_rpm_gets_429_with_retry_after(keyed):
    gw, keys = keyed
    key = create(keys, "slow", "--rpm", "2")
    assert [post(gw, key).status_code for _ in range(2)] == [200, 200]
    over = post(gw, key)
    assert over.status_code == 429
    assert 1 <= int(over.headers["Retry-After"]) <= 61


def test_unknown_collections_and_bad_rpm_are_refused_at_creation(keyed):
    _, keys = keyed
    assert keys("create", "x", "--collections", "nope").returncode == 1
    assert keys("create", "y", "--rpm", "0").returncode == 2
    assert keys("create").returncode == 2


def test_serving_beyond_loopback_without_keys_is_refused():
    result = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert "require_keys" in result.stderr


def test_secrets_never_reach_records_or_logs(make_gateway, sim, tmp_path, caplog):
    gw = make_gateway()
    sim.set(served("alpha"), status=401, error_message="Incorrect API key provided: sim-key.")
    with caplog.at_level(logging.DEBUG):
        completion, _ = gw.ask("bench/trio")
    alpha = completion.model_extra["bench"]["seats"][0]
    assert alpha["status"] == "error" and "sim-key" not in alpha["error"]
    record = gw.http.get(f"/bench/calls/{alpha['call']}").json()
    assert record["error_class"] == "auth" and "sim-key" not in record["error"]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("records.db*"))
    assert b"sim-key" not in stored
    assert "sim-key" not in caplog.text

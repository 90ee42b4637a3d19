"""Gateway keys: created once, stored as digests, required when configured, scoped, rate limited."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import openai
import pytest
import yaml

from tests.helpers.bench import bench_raw, served

ROOT = Path(__file__).parents[2]


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
    assert gw.http.get("/v1/models", headers={"x-api-key": key}).status_code == 200
    assert keys("revoke", "old").returncode == 0
    assert keys("revoke", "old").returncode == 1
    assert post(gw, key).status_code == 401  # at once: no grace while a cache expires


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
    assert gw.http.get(f"/bench/calls/{other}", headers=headers).status_code == 404
    verdict = gw.http.post("/bench/verdict", json={"call": other, "useful": True}, headers=headers)
    assert verdict.status_code == 404
    assert gw.http.get(f"/bench/panels/{other.split('.')[0]}", headers=headers).status_code == 404


def test_a_scoped_key_nominates_only_models_of_its_collections(keyed, sim):
    """The attack: a key scoped to `solo` (alpha) names an outside model in `with`, by the
    body and by the header, plain and streamed."""
    gw, keys = keyed
    scoped = create(keys, "solo-only", "--collections", "solo")
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=scoped, max_retries=0)
    asks = [
        {"extra_body": {"with": ["zeta"]}},
        {"extra_headers": {"X-Panel-With": "zeta"}},
        {"extra_body": {"with": ["alpha", "zeta"]}, "stream": True},
    ]
    for ask in asks:
        with pytest.raises(openai.PermissionDeniedError) as refused:
            client.chat.completions.create(
                model="bench/solo", messages=[{"role": "user", "content": "hi"}], **ask
            )
        error = refused.value.body
        assert error["code"] == "model_not_allowed" and error["param"] == "with"
        assert "'zeta'" in error["message"] and "solo" in error["message"]
    assert sim.log() == []  # nobody was called
    assert gw.http.get("/bench/panels", headers={"x-api-key": scoped}).json()["panels"] == []

    inside = client.chat.completions.create(
        model="bench/solo", messages=[{"role": "user", "content": "hi"}],
        extra_body={"with": ["alpha"]},
    )  # fmt: skip
    assert inside.model_extra["bench"]["seats"][0]["alias"] == "alpha"  # a member: allowed
    unscoped = create(keys, "everything")
    response = post(gw, unscoped, model="bench/solo")
    assert response.status_code == 200
    named = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}],
              "with": ["zeta"]},
        headers={"x-api-key": unscoped},
    )  # fmt: skip
    assert "zeta" in {s["alias"] for s in named.json()["bench"]["seats"]}


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
    local = keys("create", "local")  # the keyless callers' name: it would read all their records
    assert local.returncode == 2 and "local" in local.stderr


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


# --- one key against another: records, rpm, revocation ----------------------------------------


def get(gw, path, key):
    return gw.http.get(path, headers={"x-api-key": key})


def judge(gw, call, key, useful=True):
    return gw.http.post(
        "/bench/verdict", json={"call": call, "useful": useful}, headers={"x-api-key": key}
    )


def test_a_key_cannot_read_or_judge_another_keys_panel_which_looks_unknown(keyed, sim):
    gw, keys = keyed
    mine = create(keys, "alice", "--collections", "trio")
    theirs = create(keys, "mallory", "--collections", "trio")  # the same scope
    bench = post(gw, mine).json()["bench"]
    panel, call = bench["panel"], bench["seats"][0]["call"]
    alias = bench["seats"][0]["alias"]
    calls_made = len(sim.log())

    for path, kind, wanted, missing in (
        (f"/bench/panels/{panel}", "panel", panel, "p0123456789ab"),
        (f"/bench/calls/{call}", "call", call, "p0123456789ab.member1"),
    ):
        foreign = get(gw, path, theirs)
        absent = get(gw, path.replace(wanted, missing), theirs)
        assert foreign.status_code == absent.status_code == 404
        # the same words as for a record that does not exist: nothing says it does
        assert foreign.json() == {
            "error": {**absent.json()["error"], "message": f"Unknown {kind} {wanted!r}."}
        }
        assert "alice" not in foreign.text and "Is this" not in foreign.text

    refused = judge(gw, call, theirs, useful=False)
    absent = judge(gw, "p0123456789ab.member1", theirs)
    assert refused.status_code == absent.status_code == 404
    assert refused.json()["error"]["param"] == absent.json()["error"]["param"] == "call"
    # nothing was recorded: not in the store, not in the live figures routing reads
    assert get(gw, f"/bench/calls/{call}", mine).json()["verdict"] is None
    row = next(m for m in get(gw, "/bench/models", mine).json()["models"] if m["alias"] == alias)
    assert row["judged"] == 0
    assert len(sim.log()) == calls_made  # refusals call nothing

    # the owner still reads and judges its own
    assert get(gw, f"/bench/panels/{panel}", mine).json()["key_name"] == "alice"
    assert get(gw, f"/bench/calls/{call}", mine).status_code == 200
    assert judge(gw, call, mine).json() == {"call": call, "recorded": True}
    assert get(gw, f"/bench/calls/{call}", mine).json()["verdict"]["useful"] is True


def test_only_panels_spend_a_keys_rpm(keyed, sim):
    gw, keys = keyed
    key = create(keys, "slow", "--collections", "solo", "--rpm", "2")
    headers = {"x-api-key": key}

    def not_asking():
        """Everything a key does that asks no model: listings, records, verdicts, refusals."""
        assert get(gw, "/v1/models", key).status_code == 200
        assert get(gw, "/bench/models", key).status_code == 200
        assert get(gw, "/bench/panels/p0123456789ab", key).status_code == 404
        assert judge(gw, "p0123456789ab.member1", key).status_code == 404
        assert post(gw, key, model="bench/trio").status_code == 403  # outside its scope
        bad = gw.http.post("/v1/chat/completions", json={"model": "bench/solo"}, headers=headers)
        assert bad.status_code == 400  # no messages
        unknown_shape = gw.http.post(
            "/v1/chat/completions",
            json={"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]},
            headers={**headers, "X-Panel-Shape": "no-such-shape"},
        )
        assert unknown_shape.status_code == 400  # refused while seating: given back

    for _ in range(3):
        not_asking()
    assert sim.log() == []
    first = post(gw, key, model="bench/solo")
    assert first.status_code == 200
    call = first.json()["bench"]["seats"][0]["call"]
    assert get(gw, f"/bench/calls/{call}", key).status_code == 200
    assert judge(gw, call, key).status_code == 200
    not_asking()
    assert post(gw, key, model="bench/solo").status_code == 200
    calls_made = len(sim.log())

    over = post(gw, key, model="bench/solo")
    assert over.status_code == 429
    assert 1 <= int(over.headers["Retry-After"]) <= 61
    assert "2 requests per minute" in over.json()["error"]["message"]
    assert len(sim.log()) == calls_made  # the third panel called nobody
    assert get(gw, "/v1/models", key).status_code == 200  # over its rpm, it still reads


def test_a_revoked_key_is_refused_at_once_by_every_worker(make_gateway, sim, tmp_path, capsys):
    """Two gateways on one store and one board, as two workers: each has just served the key
    (so a cache, if there were one, would hold it), and the revocation comes from another
    command, as `keys revoke` does; the very next request on either is a 401."""
    from gateway.board import Board
    from gateway.cli.main import main

    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    board = tmp_path / "board"
    Board.create(board)
    one, two = make_gateway(raw, board=board), make_gateway(raw, board=board)

    assert main(["keys", "create", "leaver", "--config", str(config)]) == 0
    key = capsys.readouterr().out.strip()
    for gw in (one, two, one, two):
        assert get(gw, "/v1/models", key).status_code == 200
    assert post(one, key).status_code == 200

    assert main(["keys", "revoke", "leaver", "--config", str(config)]) == 0
    for gw in (two, one):
        refused = get(gw, "/v1/models", key)
        assert refused.status_code == 401, refused.text
        assert "revoked" in refused.json()["error"]["message"]
        assert post(gw, key).status_code == 401


def test_managing_keys_needs_none_of_the_providers_secrets(tmp_path):
    """`keys create/list/revoke` read the store's place and the collections' names, nothing
    that needs a provider's key: they work where those variables are not set."""
    raw = bench_raw("http://127.0.0.1:9", require_keys=True)
    for entry in raw["model_list"]:
        entry["litellm_params"]["api_key"] = "os.environ/BENCH_TEST_PROVIDER_KEY"
    raw["store"] = "sqlite:///records.db"  # relative to the config file
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    env = {k: v for k, v in os.environ.items() if k != "BENCH_TEST_PROVIDER_KEY"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "gateway.cli", *args, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=env,
        )

    checked = run("check-config")  # serving does need them: each such model is benched, and said
    assert checked.returncode == 0 and "BENCH_TEST_PROVIDER_KEY is not set" in checked.stderr
    created = run("keys", "create", "ci", "--collections", "trio,solo")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip().startswith("bwk_")
    assert run("keys", "create", "x", "--collections", "nope").returncode == 1  # still checked
    listed = run("keys", "list")
    assert listed.returncode == 0 and "ci" in listed.stdout and "active" in listed.stdout
    assert run("keys", "revoke", "ci").returncode == 0
    assert "revoked" in run("keys", "list").stdout
    assert (tmp_path / "records.db").exists()

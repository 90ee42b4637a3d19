"""`POST /bench/reload` is the dashboard's admin's, as retiring a model is, and an app embedded in
another program (not `bench-gateway serve`) says it cannot reload. The app `serve` runs
(gateway/serve/workers.py `served_app`) is served here in a thread; tests/serve/test_reload.py
reloads real `serve` processes."""

from __future__ import annotations

import httpx
import yaml

from gateway.config.settings import load_config
from gateway.serve.server import ServerThread
from gateway.serve.workers import served_app
from tests.helpers.bench import assert_openai_error, bench_raw


def test_an_embedded_gateway_says_it_cannot_reload(gateway):
    reply = gateway.http.post("/bench/reload")
    error = assert_openai_error(reply, 409)
    assert error["code"] == "config_refused"
    assert "not started by `bench-gateway serve`" in error["message"]


def test_only_the_admin_may_reload_and_nothing_changes_for_anyone_else(sim, tmp_path):
    raw = bench_raw(sim.url, require_keys=True)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    app = served_app(load_config(path))
    running = app.app.current
    raw["collections"]["more"] = {"members": ["beta"]}
    path.write_text(yaml.safe_dump(raw))
    with ServerThread(app) as server:
        with httpx.Client(base_url=server.url) as http:
            anyone = http.post("/bench/reload")
            a_key = http.post("/bench/reload", headers={"Authorization": "Bearer bwk_not_admin"})
    for reply in (anyone, a_key):
        error = assert_openai_error(reply, 401)
        assert "admin token" in error["message"]
    assert app.app.current is running  # not reloaded


def test_the_admin_reloads_on_loopback_and_the_new_collection_answers(sim, tmp_path):
    raw = bench_raw(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    app = served_app(load_config(path))
    raw["collections"]["more"] = {"members": ["beta"], "description": "added"}
    path.write_text(yaml.safe_dump(raw))
    with ServerThread(app) as server:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            before = http.get("/v1/models").json()["data"]
            reply = http.post("/bench/reload")
            after = http.get("/v1/models").json()["data"]
    assert reply.status_code == 200, reply.text
    assert reply.json()["collections"]["added"] == ["more"]
    assert "bench/more" not in {m["id"] for m in before}
    assert "bench/more" in {m["id"] for m in after}


def test_a_reload_that_moves_the_store_is_refused_and_the_running_one_kept(sim, tmp_path):
    raw = bench_raw(sim.url)
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    app = served_app(load_config(path))
    running = app.app.current
    raw["store"] = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    path.write_text(yaml.safe_dump(raw))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        reply = http.post("/bench/reload")
        models = http.get("/bench/models")
    error = assert_openai_error(reply, 409)
    assert "changes `store:`" in error["message"] and "restart the gateway" in error["message"]
    assert app.app.current is running and models.status_code == 200
    assert not (tmp_path / "elsewhere.db").exists()

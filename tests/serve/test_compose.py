"""docker-compose.yml as shipped: what it starts, checked from the file (no Docker daemon here).

The configs it mounts must load as the gateway would load them in the container, every service
must say when it is healthy (the replicas profile starts in dependency order on those checks),
and nothing but the gateway's own ports may be published, on loopback only.
"""

from __future__ import annotations

import re

from gateway.config.settings import load_config
from tests.helpers.compose import ROOT, SERVICES


def _profile(name: str | None) -> set[str]:
    return {
        s
        for s, spec in SERVICES.items()
        if (name in spec.get("profiles", [])) or (name is None and not spec.get("profiles"))
    }


def test_every_service_says_when_it_is_healthy_and_publishes_on_loopback_only() -> None:
    for name, spec in SERVICES.items():
        assert spec["healthcheck"]["test"][0] == "CMD", name
        for port in spec.get("ports", []):
            assert port.startswith("127.0.0.1:"), (name, port)
    published = {s for s, spec in SERVICES.items() if spec.get("ports")}
    assert published == {"gateway", "lb"}  # PostgreSQL, Redis and the replicas stay inside


def test_the_replicas_profile_is_postgres_redis_two_replicas_and_a_load_balancer() -> None:
    assert _profile(None) == {"sim", "gateway"}  # `docker compose up` is unchanged
    assert _profile("replicas") == {"postgres", "redis", "replica-1", "replica-2", "lb"}
    for replica in ("replica-1", "replica-2"):
        spec = SERVICES[replica]
        assert spec["environment"]["BENCH_CONFIG"] == "/app/config/replicas.yaml"
        assert set(spec["depends_on"]) == {"sim", "postgres", "redis"}
        assert all(d["condition"] == "service_healthy" for d in spec["depends_on"].values())
    assert SERVICES["replica-1"]["volumes"] != SERVICES["replica-2"]["volumes"]  # own spill
    assert set(SERVICES["lb"]["depends_on"]) == {"replica-1", "replica-2"}


def test_the_load_balancer_sends_to_both_replicas_unbuffered_keeping_the_host() -> None:
    conf = (ROOT / "config" / "nginx-replicas.conf").read_text()
    assert set(re.findall(r"server (replica-\d):8123", conf)) == {"replica-1", "replica-2"}
    assert "proxy_buffering off;" in conf  # streamed replies pass through as they come
    assert "proxy_set_header Host $http_host;" in conf  # the gateway's Host allow-list
    assert "listen 8124;" in conf
    assert SERVICES["lb"]["ports"] == ["127.0.0.1:8124:8124"]


def test_the_replicas_config_loads_with_the_urls_compose_gives_it() -> None:
    env = {
        "BENCH_STORE_URL": "postgresql://bench:pw@postgres:5432/bench",
        "BENCH_STATE_URL": "redis://redis:6379/0",
    }
    config = load_config(ROOT / "config" / "replicas.yaml", env=env)
    assert config.store == env["BENCH_STORE_URL"]
    assert config.state == env["BENCH_STATE_URL"]
    assert config.gateway.require_keys is True  # the replicas bind 0.0.0.0
    assert "127.0.0.1:8124" in config.gateway.allowed_hosts
    single = load_config(ROOT / "config" / "docker.yaml", env={})
    assert [m.alias for m in config.catalog.models] == [m.alias for m in single.catalog.models]
    # while PostgreSQL is down, seat rows wait in /app/data/spill: each replica's own volume
    assert config.spill_dir == (ROOT / "data" / "spill").resolve()
    for replica in ("replica-1", "replica-2"):
        assert any(v.endswith(":/app/data") for v in SERVICES[replica]["volumes"]), replica
    written = SERVICES["replica-1"]["environment"]
    assert written["BENCH_STORE_URL"].startswith("postgresql://bench:${BENCH_PG_PASSWORD")
    assert written["BENCH_STATE_URL"] == "redis://redis:6379/0"

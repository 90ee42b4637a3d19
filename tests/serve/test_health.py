"""`/healthz` names each shared service a replica is working around (contract §15)."""

from __future__ import annotations

import logging

import httpx
import pytest

from gateway.health import Health


def test_health_is_ok_until_a_part_degrades_and_ok_again_once_it_recovers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    health = Health()
    assert health.status() == {"status": "ok"}
    with caplog.at_level(logging.WARNING, logger="bench.health"):
        health.degraded("state", "redis at 127.0.0.1:1 refused the connection")
        health.degraded("state", "redis at 127.0.0.1:1 refused the connection")
    assert health.status() == {
        "status": "degraded",
        "degraded": {"state": "redis at 127.0.0.1:1 refused the connection"},
    }
    assert sum("state degraded" in r.getMessage() for r in caplog.records) == 1  # logged once
    health.recovered("state")
    assert health.status() == {"status": "ok"}


def test_healthz_reports_a_degraded_part_of_the_running_gateway(make_gateway) -> None:  # type: ignore[no-untyped-def]
    gateway = make_gateway()
    assert httpx.get(f"{gateway.url}/healthz").json() == {"status": "ok"}
    gateway.runtime.health.degraded("store", "postgresql is unreachable")
    reply = httpx.get(f"{gateway.url}/healthz")
    assert reply.status_code == 200
    assert reply.json() == {
        "status": "degraded",
        "degraded": {"store": "postgresql is unreachable"},
    }

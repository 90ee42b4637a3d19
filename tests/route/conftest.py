"""The route-mode fixture: a collection that answers in route mode, every member calling a tool."""

from __future__ import annotations

import pytest

from tests.helpers.bench import bench_raw
from tests.helpers.route import CALL


@pytest.fixture
def crew(make_gateway, sim):
    """A gateway whose `crew` collection answers in route mode; every member calls a tool when
    offered one, and never explores (the order is the collection's)."""
    raw = bench_raw(sim.url, route_explore=0, first_token_s=2, keepalive_s=0.2)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, tool_call=CALL, latency_s=0.01)
    return make_gateway(raw)

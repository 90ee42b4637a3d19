"""The formats' fixture: a gateway whose trio seats exactly its three members."""

from __future__ import annotations

import pytest

from tests.helpers.bench import quiet_raw


@pytest.fixture
def gw(make_gateway, sim):
    return make_gateway(quiet_raw(sim.url))

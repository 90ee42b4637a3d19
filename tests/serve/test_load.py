"""A small load run: a hundred concurrent panels through real subprocesses, checked for
correctness only (every panel whole, every seat recorded, no descriptors left behind).

The full-size run, with its timings, is `benchmarks/load.py`; this drives the same code.
"""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.load import SEATS, run_load

PANELS = 100
SEAT_S = 3.0
FD_SLACK = 10


@pytest.fixture(scope="module")
def load(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("load")
    return asyncio.run(
        run_load(PANELS, SEAT_S, workdir=workdir, fd_settle_s=30.0, fd_slack=FD_SLACK)
    )


def test_every_concurrent_panel_is_answered_with_five_ok_seats(load):
    assert load["failures"] == {}
    assert load["ok"] == PANELS
    assert load["gateway_alive"], "the gateway did not survive the run"


def test_every_panel_and_every_seat_is_on_the_record(load):
    assert load["panels_recorded"] == PANELS
    assert load["calls_recorded"] == SEATS * PANELS


def test_no_connection_cap_queues_seats_behind_each_other(load):
    # aiohttp's default pool is 100 connections: a gateway stuck at that ceiling would show
    # at most 100 here. Five hundred seats of 3 s leave well within that time, even when a busy
    # machine stretches the set-ups (147 open at once was seen with 2 s seats on a loaded box).
    assert load["most_open_upstream"] > 120, load


def test_the_gateway_holds_no_more_descriptors_after_the_run_than_before(load):
    assert load["fds_after"] <= load["fds_before"] + FD_SLACK, load

"""Heavy requests, tried as the attack: many streamed panels of large answers, an answer over the
limit, more panels than the worker admits. Each must leave the gateway answering everyone else.

Every test drives the real gateway on uvicorn, litellm calling the simulated upstream, and the
official SDK as the client; health latency is read by a separate poller while the attack runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sqlite3
import threading
import time
from collections.abc import Iterator

import openai
import pytest

from benchmarks.load import HealthPoller
from gateway.serve.process import tune_the_collector
from tests.helpers.bench import bench_raw, served

# CPU-heavy, and timed against /healthz: no other worker runs a test meanwhile (conftest.py)
pytestmark = pytest.mark.alone

USER = [{"role": "user", "content": "Review the retry loop, at length."}]


def trio(sim_url, **gateway):
    raw = bench_raw(sim_url, **{"max_explorers": 0, "reserves": 0, **gateway})
    raw["collections"]["trio"]["merger"] = None
    return raw


def big_answer(size: int) -> str:
    """*size* bytes of words, all different (the simulator streams them three words a chunk;
    litellm takes a chunk repeated many times over for a model stuck in a loop)."""
    return " ".join(f"w{i}" for i in range(size // 3 + 1))[:size]


async def streamed_panels(url: str, count: int) -> list[tuple[str, dict]]:
    """*count* streamed panels at once through the async SDK: (whole text, last chunk's bench)."""
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="local", max_retries=0, timeout=120)

    async def one() -> tuple[str, dict]:
        parts, bench = [], {}
        stream = await client.chat.completions.create(
            model="bench/trio", messages=USER, stream=True
        )
        async for chunk in stream:
            if chunk.choices:
                parts.append(chunk.choices[0].delta.content or "")
            bench = (chunk.model_extra or {}).get("bench", bench)
        return "".join(parts), bench

    try:
        return await asyncio.gather(*(one() for _ in range(count)))
    finally:
        await client.close()


@contextlib.contextmanager
def collector_as_served() -> Iterator[None]:
    """The cyclic GC as `bench-gateway serve` sets it for its process (gateway/serve/process.py),
    for a test whose gateway shares this process: with every seat call of 200 panels in flight
    at once, the default thresholds run full collections over every object of calls waiting on
    their answers (0.7-0.8 s each here, the pauses the served process is tuned to avoid)."""
    before = gc.get_threshold()
    tune_the_collector()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_200_streamed_panels_of_large_answers_leave_healthz_answered(make_gateway, sim):
    size = 100_000
    gw = make_gateway(trio(sim.url, seat_timeout_s=60))
    sim.set("*", latency_s=0.05, answer=big_answer(size))
    with collector_as_served(), HealthPoller(gw.url, every_s=0.05) as health:
        began = time.monotonic()
        panels = asyncio.run(streamed_panels(gw.url, 200))
        took = time.monotonic() - began
    assert len(panels) == 200
    for text, bench in panels:
        assert [s["status"] for s in bench["seats"]] == ["ok"] * 3, bench
        assert len(text) > 3 * size
    assert len(sim.log()) == 600
    assert not any(r["stream"] for r in sim.log()), "a panel's seats were streamed upstream"
    assert not health.failures, health.failures
    assert len(health.latencies) >= 5, "the poller hardly ran"
    assert max(health.latencies) < 1.0, (
        f"/healthz took {max(health.latencies):.2f} s at worst ({took:.1f} s run)"
    )


def test_a_streamed_panels_seats_are_not_streamed_upstream(make_gateway, sim):
    gw = make_gateway(trio(sim.url))
    with gw.client.chat.completions.create(model="bench/trio", messages=USER, stream=True) as s:
        text = "".join(c.choices[0].delta.content or "" for c in s if c.choices)
    assert "Simulated answer" in text
    assert [r["stream"] for r in sim.log()] == [False, False, False]


def records(gw, panel_id: str) -> dict[str, dict]:
    return {s["alias"]: s for s in gw.http.get(f"/bench/panels/{panel_id}").json()["seats"]}


def test_an_answer_over_max_answer_bytes_ends_that_seat_as_a_recorded_error(make_gateway, sim):
    limit = 10_000
    gw = make_gateway(trio(sim.url, max_answer_bytes=limit))
    sim.set(served("alpha"), answer=big_answer(2 * limit))  # read whole, then found too long
    sim.set(served("gamma"), answer=big_answer(100 * limit))  # reading stops part way
    completion, raw = gw.ask("bench/trio")
    assert raw.http_response.status_code == 200
    seats = {s["alias"]: s for s in completion.model_extra["bench"]["seats"]}
    recorded = records(gw, completion.model_extra["bench"]["panel"])
    for alias in ("alpha", "gamma"):
        assert seats[alias]["status"] == "error"
        assert seats[alias]["error"] == f"the answer was over the limit of {limit} bytes"
        assert recorded[alias]["status"] == "error"
        assert recorded[alias]["error_class"] == "too_large"
        assert recorded[alias]["answer"] is None
    assert seats["delta"]["status"] == "ok" and recorded["delta"]["status"] == "ok"
    assert gw.http.get("/healthz").status_code == 200


def test_a_streamed_seat_stops_being_read_once_over_max_answer_bytes(make_gateway, sim):
    limit = 2_000
    gw = make_gateway(trio(sim.url, max_answer_bytes=limit, stream_seats="always"))
    # 40 KB, three words a chunk, 1 ms apart: some 2.2 s if read to the end
    sim.set(served("alpha"), answer=big_answer(20 * limit), chunk_delay_s=0.001)
    completion, _ = gw.ask("bench/trio")
    seats = {s["alias"]: s for s in completion.model_extra["bench"]["seats"]}
    assert seats["alpha"]["status"] == "error"
    assert "over the limit of 2000 bytes" in seats["alpha"]["error"]
    assert records(gw, completion.model_extra["bench"]["panel"])["alpha"]["error_class"] == (
        "too_large"
    )
    assert seats["gamma"]["status"] == seats["delta"]["status"] == "ok"
    alpha = sim.log(served("alpha"))[0]
    assert alpha["stream"]
    deadline = time.monotonic() + 5
    while alpha["outcome"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alpha["outcome"] == "client_disconnected", "the gateway read the stream to its end"


def panel_count(gw) -> int:
    with sqlite3.connect(gw.config.store.removeprefix("sqlite:///")) as db:
        return db.execute("SELECT COUNT(*) FROM panels").fetchone()[0]


def wait_for_calls(sim, count: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while len(sim.log()) < count:
        assert time.monotonic() < deadline, f"{len(sim.log())} calls, waited for {count}"
        time.sleep(0.02)


def in_threads(gw, count: int) -> tuple[list, list[threading.Thread]]:
    done: list = []
    threads = [
        threading.Thread(target=lambda: done.append(gw.ask("bench/trio"))) for _ in range(count)
    ]
    for thread in threads:
        thread.start()
    return done, threads


def test_a_panel_beyond_max_panels_in_flight_gets_503_and_calls_nobody(make_gateway, sim):
    gw = make_gateway(trio(sim.url, max_panels_in_flight=2))
    sim.set("*", latency_s=1.5)
    done, threads = in_threads(gw, 2)
    wait_for_calls(sim, 6)
    recorded = panel_count(gw)
    refused = gw.http.post("/v1/chat/completions", json={"model": "bench/trio", "messages": USER})
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "1"
    error = refused.json()["error"]
    assert error["type"] == "service_unavailable" and error["code"] == "overloaded"
    assert "2 panels are in flight" in error["message"] and "Nobody was seated" in error["message"]
    assert len(sim.log()) == 6, "the refused panel reached the upstream"
    assert panel_count(gw) == recorded == 2, "the refused panel was recorded"
    with HealthPoller(gw.url) as health:
        time.sleep(0.2)
    assert health.latencies and not health.failures  # health is never refused
    for thread in threads:
        thread.join(30)
    assert [c.model_extra["bench"]["seats"][0]["status"] for c, _ in done] == ["ok", "ok"]
    sim.set("*", latency_s=0.01)
    completion, _ = gw.ask("bench/trio")  # room again once the two are over
    assert len(completion.model_extra["bench"]["seats"]) == 3


def test_a_panel_beyond_max_seats_in_flight_gets_503_through_the_sdk(make_gateway, sim):
    gw = make_gateway(trio(sim.url, max_seats_in_flight=6))
    sim.set("*", latency_s=1.5)
    done, threads = in_threads(gw, 1)  # holds 3 seat calls; a new panel needs room for 5
    wait_for_calls(sim, 3)
    try:
        gw.ask("bench/trio")
    except openai.APIStatusError as exc:
        assert exc.status_code == 503
        assert exc.response.headers["Retry-After"] == "1"
        assert "3 seat calls are in flight (the most is 6)" in exc.message
    else:
        raise AssertionError("a panel beyond max_seats_in_flight was served")
    assert len(sim.log()) == 3
    for thread in threads:
        thread.join(30)
    assert len(done) == 1

"""The litellm seam: its failures classified in one place. (Offline from the first import: the
process owner's environment, tests/serve/test_process.py.)"""

from __future__ import annotations

import pytest

from gateway.errors import UpstreamContextWindow, UpstreamRateLimited
from gateway.upstream import failures
from gateway.upstream import seam as upstream
from tests.helpers.bench import bench_raw


class _Response:
    def __init__(self, headers):
        self.headers = headers


class _Limited(Exception):
    def __init__(self, message, headers):
        super().__init__(message)
        self.response = _Response(headers)


@pytest.mark.parametrize(
    "message, headers, wait",
    [
        ("slow down", {"retry-after": "30"}, 30.0),
        ("slow down", {"retry-after-ms": "2500"}, 2.5),
        ("slow down", {"retry-after-ms": "500", "retry-after": "9"}, 0.5),
        ("Please try again in 20s.", {}, 20.0),
        ("Rate limit reached, retry in 750ms", {}, 0.75),
        ("slow down", {"retry-after": "soon"}, None),
        ("slow down", {}, None),
    ],
)
def test_the_wait_a_provider_asks_for_is_read_from_headers_or_message(message, headers, wait):
    assert failures._retry_after(_Limited(message, headers)) == wait


def test_a_context_window_message_carries_its_limit():
    error = failures.classify(ValueError("This model's maximum context length is 8192 tokens"), 5)
    assert isinstance(error, UpstreamContextWindow) and error.limit == 8192


def test_rate_limit_errors_become_rate_limited():
    import litellm

    exc = litellm.RateLimitError("limited", llm_provider="openai", model="m")
    assert isinstance(failures.classify(exc, 5), UpstreamRateLimited)


def test_seat_calls_are_set_up_on_the_loop_and_sent_through_the_shared_session(make_gateway, sim):
    gateway = make_gateway(upstream_reader="litellm")
    way_out = gateway.runtime.upstream.litellm
    inlined_before = way_out.executor.inlined
    completion, _ = gateway.ask("bench/trio")
    assert [s["status"] for s in completion.bench["seats"]] == ["ok"] * 5
    assert way_out.session is not None and not way_out.session.closed
    # every seat's request reported leaving through the session's trace hook, so none is silent
    assert way_out.setups.silent == set()
    # and litellm's set-up of each of the five calls ran on the event loop, not in a thread
    assert way_out.executor.inlined - inlined_before == 5
    assert {entry["user_agent"] for entry in sim.log()} == {"AsyncOpenAI/Python 3.57.0"}


def test_seat_calls_to_an_openai_compatible_provider_are_read_directly(gateway, sim):
    way_out = gateway.runtime.upstream
    inlined_before = way_out.litellm.executor.inlined
    completion, _ = gateway.ask("bench/trio")
    assert [s["status"] for s in completion.bench["seats"]] == ["ok"] * 5
    # sent on the direct reader's own session (aiohttp, no SDK), litellm set up nothing
    assert way_out.direct.session is not None and not way_out.direct.session.closed
    assert {entry["user_agent"] for entry in sim.log()} == {""}
    assert way_out.litellm.executor.inlined == inlined_before


def test_a_model_can_rule_the_direct_reader_out(make_gateway, sim):
    raw = bench_raw(sim.url)
    raw["model_list"][0]["upstream_reader"] = "litellm"  # alpha, served sim-alpha
    gateway = make_gateway(raw)
    gateway.ask("bench/trio")
    agents = {entry["model"]: entry["user_agent"] for entry in sim.log()}
    assert agents.pop("sim-alpha").startswith("AsyncOpenAI/")
    assert agents and set(agents.values()) == {""}


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"api_base": "http://127.0.0.1:8199/v1"}, "127.0.0.1:8199"),
        ({"api_base": "https://user:secret@api.example.com/v1?key=abc"}, "api.example.com:443"),
        ({"api_base": "http://[::1]:9/v1"}, "[::1]:9"),
        ({"model": "openai/gpt-x"}, "openai/gpt-x's default endpoint"),
    ],
)
def test_an_unreachable_endpoint_is_named_by_host_and_port_only(params, where):
    assert failures.endpoint_of(params) == where


def test_litellm_is_imported_only_behind_the_upstream_seam():
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "gateway"
    pattern = re.compile(r"^\s*(from|import) litellm\b", re.M)
    outside = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "upstream" not in path.relative_to(package).parts and pattern.search(path.read_text())
    ]
    assert outside == []


def test_direct_is_refused_at_start_for_a_provider_that_is_not_openai_compatible():
    import asyncio

    way_out = upstream.UpstreamSeam()
    served = "anthropic/claude-sonnet-4-5"
    with pytest.raises(ValueError, match="upstream_reader: direct for anthropic/claude"):
        asyncio.run(way_out.open([served], {served: "direct"}))
    # refused before anything was opened
    assert way_out.litellm.session is None and way_out.direct.session is None


def test_a_models_own_reader_overrides_the_gateways(tmp_path):
    from gateway.config.settings import parse_config

    raw = bench_raw("http://127.0.0.1:9", upstream_reader="litellm")
    raw["model_list"][1]["upstream_reader"] = "direct"
    config = parse_config(raw, base=tmp_path)
    assert config.reader("alpha") == "litellm" and config.reader("beta") == "direct"

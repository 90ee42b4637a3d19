"""The bench's MCP tools through the official MCP client, over both transports: streamable HTTP
against a real gateway (`POST /mcp`), and stdio by launching `bench-gateway mcp --url ...`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from gateway.access.keys import key_record, new_key
from gateway.store.open import open_store
from tests.helpers.bench import bench_raw, served

ROOT = Path(__file__).parents[2]
TOOLS = {"list_collections", "ask", "verdict", "pending_verdicts"}


def add_key(gw, name: str, collections: list[str] | None = None) -> str:
    """A key written to the gateway's own record store, as `bench-gateway keys create` does."""
    key = new_key()

    async def write() -> None:
        store = open_store(gw.config.store)
        await store.open()
        try:
            await store.add_key(key_record(name, key, collections, None))
        finally:
            await store.close()

    asyncio.run(write())
    return key


@asynccontextmanager
async def over_http(gw, key: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client(f"{gw.url}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def over_stdio(gw, key: str | None = None) -> AsyncIterator[ClientSession]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    args = ["-m", "gateway.cli", "mcp", "--url", gw.url]
    if key:
        env["BENCH_GATEWAY_KEY"] = key
    server = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=ROOT)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


Connect = Callable[..., Any]
TRANSPORTS = [pytest.param(over_http, id="http"), pytest.param(over_stdio, id="stdio")]


def text_of(result) -> str:
    return "\n".join(part.text for part in result.content if part.type == "text")


def run(connect: Connect, gw, work: Callable[[ClientSession], Awaitable[Any]], key=None) -> Any:
    async def go() -> Any:
        async with connect(gw, key) as session:
            return await work(session)

    return asyncio.run(go())


@pytest.mark.parametrize("connect", TRANSPORTS)
def test_the_tools_are_listed_with_schemas_and_the_loop_in_the_instructions(gateway, connect):
    async def work(session: ClientSession):
        return await session.list_tools()

    listed = run(connect, gateway, work)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    ask = tools["ask"].input_schema
    assert set(ask["required"]) == {"collection", "prompt"}
    assert {"system", "shape", "merged", "with"} <= set(ask["properties"])
    verdict = tools["verdict"].input_schema
    assert set(verdict["required"]) == {"call", "useful"}
    assert {"note", "real", "false"} <= set(verdict["properties"])
    assert tools["pending_verdicts"].input_schema["required"] == ["calls"]
    assert all(tool.description for tool in tools.values())


def test_the_server_tells_the_agent_the_loop(gateway):
    async def go():
        async with httpx2.AsyncClient(timeout=60) as http:
            async with streamable_http_client(f"{gateway.url}/mcp", http_client=http) as streams:
                async with ClientSession(*streams) as session:
                    return await session.initialize()

    init = asyncio.run(go())
    assert "verdict" in init.instructions and "ask" in init.instructions


@pytest.mark.parametrize("connect", TRANSPORTS)
def test_ask_then_judge_every_call_and_read_the_verdict_back(gateway, sim, connect):
    sim.set(served("gamma"), latency_s=0.3)
    progress: list[tuple[float, float | None, str | None]] = []

    async def note(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def work(session: ClientSession):
        listed = await session.call_tool("list_collections", {})
        asked = await session.call_tool(
            "ask",
            {"collection": "trio", "prompt": "Is this code right?", "shape": "review"},
            progress_callback=note,
        )
        calls = [c for c in text_of(asked).split("`") if c.startswith("p") and "." in c]
        calls = list(dict.fromkeys(calls))
        before = await session.call_tool("pending_verdicts", {"calls": calls})
        judged = await session.call_tool(
            "verdict", {"call": calls[0], "useful": False, "note": "wrong", "false": ["x"]}
        )
        after = await session.call_tool("pending_verdicts", {"calls": [*calls, "pnope.member1"]})
        return listed, asked, calls, before, judged, after

    listed, asked, calls, before, judged, after = run(connect, gateway, work)
    assert "`trio`" in text_of(listed) and not listed.is_error
    assert not asked.is_error
    text = text_of(asked)
    assert "## member1" in text and "| call | seat | model | status | seconds |" in text
    seats = {c.split(".")[1] for c in calls}
    assert {"member1", "member2", "member3", "explorer1"} <= seats
    assert "pending: " + ", ".join(calls) in text_of(before)
    assert "recorded" in text_of(judged) and not judged.is_error
    assert f"judged: {calls[0]}" in text_of(after)
    assert "unknown: pnope.member1" in text_of(after)
    record = gateway.http.get(f"/bench/calls/{calls[0]}").json()
    assert record["verdict"]["useful"] in (0, False) and record["verdict"]["note"] == "wrong"
    assert record["verdict"]["false"] == ["x"]
    # seats finished of seats, the last one the slow seat
    assert progress and progress[-1][:2] == (len(calls), len(calls))
    assert [p[0] for p in progress] == sorted(p[0] for p in progress)


@pytest.mark.parametrize("connect", TRANSPORTS)
def test_a_bad_argument_is_a_tool_error_not_a_crash(gateway, sim, connect):
    async def work(session: ClientSession):
        results = [
            await session.call_tool("ask", {"collection": "trio"}),  # no prompt
            await session.call_tool("ask", {"collection": "nope", "prompt": "hi"}),
            await session.call_tool("ask", {"collection": "trio", "prompt": "hi", "shape": "x"}),
            await session.call_tool("verdict", {"call": "pnope.member1", "useful": True}),
        ]
        still = await session.call_tool("list_collections", {})
        return results, still

    results, still = run(connect, gateway, work)
    assert all(r.is_error for r in results)
    assert "prompt" in text_of(results[0])
    assert "nope" in text_of(results[1]) and "trio" in text_of(results[1])  # lists collections
    assert "shape" in text_of(results[2]).lower()
    assert "Unknown call" in text_of(results[3])
    assert not still.is_error
    assert sim.log() == []  # nothing reached a model


@pytest.mark.parametrize("connect", TRANSPORTS)
def test_a_scoped_key_is_refused_a_collection_outside_its_scope(make_gateway, sim, connect):
    gw = make_gateway(bench_raw(sim.url, require_keys=True))
    key = add_key(gw, "scoped", ["solo"])

    async def work(session: ClientSession):
        listed = await session.call_tool("list_collections", {})
        refused = await session.call_tool("ask", {"collection": "trio", "prompt": "hi"})
        return listed, refused

    listed, refused = run(connect, gw, work, key=key)
    assert "`solo`" in text_of(listed) and "`trio`" not in text_of(listed)
    assert refused.is_error and "may not use collection 'trio'" in text_of(refused)
    assert sim.log() == []


def test_mcp_over_http_needs_the_gateway_key(make_gateway, sim):
    gw = make_gateway(bench_raw(sim.url, require_keys=True))
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    refused = gw.http.post("/mcp", json=hello, headers=headers)
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    key = add_key(gw, "agent")
    opened = gw.http.post("/mcp", json=hello, headers={**headers, "x-api-key": key})
    assert opened.status_code == 200 and "protocolVersion" in opened.text
    # stateless: every request is checked on its own, none rides on an earlier one's key
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert gw.http.post("/mcp", json=ping, headers=headers).status_code == 401


def test_mcp_requests_pass_the_guard_and_a_foreign_host_does_not(gateway):
    accept = {"Accept": "application/json, text/event-stream"}
    bad_host = gateway.http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={**accept, "Host": "evil.example"},
    )
    assert bad_host.status_code == 403
    text = gateway.http.post(
        "/mcp", content=b"{}", headers={**accept, "Content-Type": "text/plain"}
    )
    assert text.status_code == 415
    # stateless: no stream to GET, no session to DELETE; the transport allows a 405 for both
    for method in ("GET", "DELETE"):
        refused = gateway.http.request(method, "/mcp", headers={"Accept": "text/event-stream"})
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"


def test_bench_pending_sorts_a_keys_own_calls_and_another_keys_are_unknown(make_gateway, sim):
    gw = make_gateway(bench_raw(sim.url, require_keys=True))
    mine, theirs = add_key(gw, "mine"), add_key(gw, "theirs")
    asked = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-api-key": mine},
    ).json()
    call = asked["bench"]["seats"][0]["call"]
    own = gw.http.post("/bench/pending", json={"calls": [call]}, headers={"x-api-key": mine})
    assert own.json()["pending"] == [call]
    listed = gw.http.post("/bench/pending", json={}, headers={"x-api-key": mine}).json()
    seats = {s["call"] for s in asked["bench"]["seats"] if s["status"] == "ok"}
    assert set(listed["pending"]) == seats and {r["call"] for r in listed["owed"]} == seats
    other = gw.http.post("/bench/pending", json={"calls": [call]}, headers={"x-api-key": theirs})
    assert other.json()["unknown"] == [call] and other.json()["pending"] == []
    assert gw.http.post("/bench/pending", json={}, headers={"x-api-key": theirs}).json() == {
        "pending": [],
        "owed": [],
    }
    bad = gw.http.post("/bench/pending", json={"calls": "x"}, headers={"x-api-key": mine})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "calls"


def test_the_stdio_server_is_quiet_on_stderr_unless_asked(gateway, sim, tmp_path):
    """Its stderr is the host's log of the server: a session (list, ask, judge) leaves it
    empty; `--verbose` or `BENCH_LOG_LEVEL=INFO` brings back a line per request it makes."""

    async def session_writing_stderr_to(path: Path, *flags: str, **env_extra: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
        args = ["-m", "gateway.cli", "mcp", "--url", gateway.url, *flags]
        server = StdioServerParameters(
            command=sys.executable, args=args, env={**env, **env_extra}, cwd=ROOT
        )
        with path.open("w") as errlog:
            async with stdio_client(server, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.list_tools()
                    await session.call_tool("list_collections", {})
                    asked = await session.call_tool("ask", {"collection": "trio", "prompt": "?"})
                    call = next(c for c in text_of(asked).split("`") if c.startswith("p"))
                    await session.call_tool("verdict", {"call": call, "useful": True})
        return path.read_text()

    quiet = asyncio.run(session_writing_stderr_to(tmp_path / "quiet.log"))
    assert quiet == ""
    verbose = asyncio.run(session_writing_stderr_to(tmp_path / "verbose.log", "--verbose"))
    assert verbose.count("HTTP Request") >= 3, verbose
    by_env = asyncio.run(session_writing_stderr_to(tmp_path / "env.log", BENCH_LOG_LEVEL="info"))
    assert by_env.count("HTTP Request") >= 3, by_env


def test_a_bad_log_level_is_bad_usage():
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}}
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "mcp"],
        env={**env, "BENCH_LOG_LEVEL": "loud"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "BENCH_LOG_LEVEL must be one of" in done.stderr

"""The direct reader against litellm's own path: the same scripted answers, byte for byte from
the simulator, through two gateways that differ only in `upstream_reader`, give the same
client bytes in every route format (streamed and not), the same panels, and the same records.
Only what legitimately differs from one request to the next is normalised: ids, time stamps,
durations, and the conversation id a gateway draws at random.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.bench import bench_raw
from tests.helpers.route import WEATHER

# (format, path, streamed): every route format, each on a model of its own, so one request's
# cooldown (a 429) never decides another's
KINDS = [
    ("chat", "/v1/chat/completions", True),
    ("chat", "/v1/chat/completions", False),
    ("responses", "/v1/responses", True),
    ("responses", "/v1/responses", False),
    ("anthropic", "/v1/messages", True),
    ("anthropic", "/v1/messages", False),
    ("ollama", "/api/chat", True),
    ("ollama", "/api/chat", False),
    ("gemini", "/v1beta/models/{c}:streamGenerateContent?alt=sse", True),
    ("gemini", "/v1beta/models/{c}:generateContent", False),
]
VOLATILE = {
    "id", "created", "created_at", "createdAt", "responseId", "call", "conversation",
    "seconds", "started", "finished", "first_token_s", "total_duration", "load_duration",
    "prompt_eval_duration", "eval_duration", "panel", "panel_id", "last_seated",
    "cooling_until",
}  # fmt: skip


def _event(obj: dict[str, Any]) -> str:
    return "data: " + json.dumps(obj) + "\n\n"


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    base = {"id": "chatcmpl-script", "object": "chat.completion.chunk", "created": 7}
    return _event({**base, "model": "scripted", "choices": choices, **extra})


USAGE = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
ROLE = _chunk({"role": "assistant", "content": ""})
TEXT = [
    _chunk({"content": "The answer "}),
    _chunk({"content": "is forty"}),
    _chunk({"content": "-two."}),
]
STOP, DONE = _chunk({}, "stop"), "data: [DONE]\n\n"
CALLS = [
    _chunk({"tool_calls": [{"index": 0, "id": "call_a1", "type": "function",
                            "function": {"name": "weather", "arguments": ""}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}),
    _chunk({"tool_calls": [{"index": 1, "id": "call_b2", "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Rome"}'}}]}),
    _chunk({}, "tool_calls"),
]  # fmt: skip
THINKING = [_chunk({"reasoning_content": "Let me "}), _chunk({"reasoning_content": "think."})]
ERROR = _event({"error": {"message": "The model broke down.", "type": "server_error"}})

WHOLE = [ROLE, *TEXT, STOP, _chunk(None, usage=USAGE), DONE]
LIMITED = json.dumps(
    {
        "error": {
            "message": "Rate limit reached, try again in 7s",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
)
HTML = "<html><body><h1>502 Bad Gateway</h1></body></html>"
BAD_JSON, BAD_UTF8 = "data: {not json\n\n", 'data: {"x": "\udcff\udcfe"}\n\n'

# name -> (the scripted reply, are tools offered)
STREAMS: dict[str, tuple[dict[str, Any], bool]] = {
    "text": ({"parts": WHOLE}, False),
    "in one read": ({"parts": ["".join(WHOLE)]}, False),
    "no usage": ({"parts": [ROLE, *TEXT, STOP, DONE]}, False),
    "tool calls": ({"parts": [ROLE, *CALLS, _chunk(None, usage=USAGE), DONE]}, True),
    "reasoning": ({"parts": [ROLE, *THINKING, *WHOLE[1:]]}, False),
    "error event": ({"parts": [ROLE, TEXT[0], ERROR]}, False),
    "error first": ({"parts": [ROLE, ERROR]}, False),
    "cut": ({"parts": [ROLE, *TEXT[:2]], "cut": True}, False),
    "no finish": ({"parts": [ROLE, *TEXT, DONE]}, False),
    # the body ends cleanly halfway: neither a finish nor [DONE] (a broken stream, as a cut is)
    "ends halfway": ({"parts": [ROLE, *TEXT[:2]]}, False),
    # the connection reset (RST) halfway
    "reset": (
        {
            "flood": {
                "head": "".join([ROLE, *TEXT[:2]]),
                "end": "reset",
                "content_type": "text/event-stream",
            }
        },
        False,
    ),
    "invalid json": ({"parts": [ROLE, TEXT[0], BAD_JSON, *TEXT[1:], STOP, DONE]}, False),
    "invalid utf-8": ({"parts": [ROLE, TEXT[0], BAD_UTF8, STOP, DONE]}, False),
    "500 html": ({"status": 500, "content_type": "text/html", "parts": [HTML]}, False),
    "429": (
        {
            "status": 429,
            "content_type": "application/json",
            "headers": {"retry-after": "7", "x-ratelimit-remaining-requests": "0"},
            "parts": [LIMITED],
        },
        False,
    ),
}


def _answer(message: dict[str, Any], usage: dict[str, Any] | None = USAGE) -> dict[str, Any]:
    body = {"id": "chatcmpl-plain", "object": "chat.completion", "created": 7, "model": "x"}
    body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    if usage:
        body["usage"] = usage
    return {"content_type": "application/json", "parts": [json.dumps(body)]}


def _refusal(status: int, message: str) -> dict[str, Any]:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return {"status": status, "content_type": "application/json", "parts": [body]}


ANSWERS: dict[str, dict[str, Any]] = {
    "text": _answer({"role": "assistant", "content": "The answer is forty-two."}),
    "no usage": _answer({"role": "assistant", "content": "Short."}, None),
    "reasoning": _answer(
        {"role": "assistant", "content": "Yes.", "reasoning_content": "Let me think."}
    ),
    "empty": _answer({"role": "assistant", "content": ""}),
    "invalid json": {"content_type": "application/json", "parts": ['{"choices": [']},
    "invalid utf-8": {"content_type": "application/json", "parts": ['{"x": "\udcff"}']},
    "500 html": STREAMS["500 html"][0],
    "401": _refusal(401, "Incorrect API key"),
    "context": _refusal(400, "This model's maximum context length is 8192 tokens"),
    "429": STREAMS["429"][0],
}


def _raw(sim_url: str, reader: str, **gateway: Any) -> dict[str, Any]:
    raw = bench_raw(sim_url, upstream_reader=reader, route_explore=0, max_explorers=0,
                    reserves=0, **gateway)  # fmt: skip
    raw["model_list"] = [
        {
            "model_name": f"m{i}",
            "litellm_params": {
                "model": f"openai/sim-d{i}", "api_base": f"{sim_url}/v1", "api_key": "sim-key",
            },
            "bench": {"connection": f"c{i}"},
        }
        for i in range(len(KINDS))
    ]  # fmt: skip
    raw["collections"] = {
        f"r{i}": {"members": [f"m{i}"], "reply": "route"} for i in range(len(KINDS))
    }
    raw["collections"].update({f"p{i}": {"members": [f"m{i}"]} for i in range(len(KINDS))})
    return raw


def _pair(make_gateway, sim, tmp_path: Path, **gateway: Any) -> dict[str, Any]:
    made = {}
    for reader in ("litellm", "direct"):
        store = tmp_path / f"{reader}.db"
        made[reader] = (make_gateway(_raw(sim.url, reader, **gateway), store=store), store)
    return made


@pytest.fixture
def pair(make_gateway, sim, tmp_path: Path):
    """Two gateways, litellm's reader and the direct one, on one simulator."""
    return _pair(make_gateway, sim, tmp_path)


@pytest.fixture
def streaming_pair(make_gateway, sim, tmp_path: Path):
    """The same two, streaming every panel seat's call."""
    return _pair(make_gateway, sim, tmp_path, stream_seats="always")


def _request(kind: int, tools: bool) -> tuple[str, dict[str, Any]]:
    name, path, streamed = KINDS[kind]
    collection = f"r{kind}"
    hi = [{"role": "user", "content": "What is the answer?"}]
    fn = WEATHER["function"]
    if name == "chat":
        body: dict[str, Any] = {"model": collection, "messages": hi, "stream": streamed}
        if streamed:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [WEATHER]
    elif name == "responses":
        body = {"model": collection, "input": "What is the answer?", "stream": streamed}
        if tools:
            body["tools"] = [
                {"type": "function", "name": fn["name"], "parameters": fn["parameters"]}
            ]
    elif name == "anthropic":
        body = {"model": collection, "max_tokens": 200, "messages": hi, "stream": streamed}
        if tools:
            body["tools"] = [{"name": fn["name"], "input_schema": fn["parameters"]}]
    elif name == "ollama":
        body = {"model": collection, "messages": hi, "stream": streamed}
        if tools:
            body["tools"] = [WEATHER]
    else:
        body = {"contents": [{"role": "user", "parts": [{"text": "What is the answer?"}]}]}
        if tools:
            body["tools"] = [
                {"functionDeclarations": [{"name": fn["name"], "parameters": fn["parameters"]}]}
            ]
    return path.format(c=collection), body


def _normal(text: str, secrets: list[str]) -> Any:
    """*text* (a JSON body, or SSE / NDJSON lines of JSON) with what may differ taken out."""
    for n, secret in enumerate(secrets):
        text = text.replace(secret, f"<conversation{n}>")
    text = re.sub(r"call_[A-Za-z0-9_]{20,}", "call_<id>", text)
    try:
        return _scrub(json.loads(text))
    except ValueError:
        pass
    lines = []
    for line in text.split("\n"):
        body = line[6:] if line.startswith("data: ") else line
        try:
            lines.append(_scrub(json.loads(body)))
        except ValueError:
            lines.append(line)
    return lines


_ID = r"\1_<id>"


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<volatile>" if k in VOLATILE else _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str):
        value = re.sub(r"\b\d+\.\d\d s\b", "<seconds> s", value)
        value = re.sub(r"\bturn c[0-9a-f]{8,}\.", "turn <conversation>.", value)
        value = re.sub(r"\b(chatcmpl|resp|msg|fc|rs|toolu|item)_[A-Za-z0-9_-]{6,}", _ID, value)
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", "<time>", value)
    return value


def _rows(store: Path, count: int) -> list[dict[str, Any]]:
    """The calls recorded, once there are *count* (records are written as turns end)."""
    deadline = time.monotonic() + 10
    while True:
        with sqlite3.connect(store) as db:
            db.row_factory = sqlite3.Row
            rows = [dict(r) for r in db.execute("SELECT * FROM calls ORDER BY started")]
        if len(rows) >= count or time.monotonic() > deadline:
            return rows


def _behaviour(reply: dict[str, Any]) -> dict[str, Any]:
    """The simulator's behaviour for a scripted *reply* (or one made as it is sent)."""
    return {"flood": reply["flood"]} if "flood" in reply else {"script": reply}


def _ask(gw, sim, kind: int, script: dict[str, Any], tools: bool) -> dict[str, Any]:
    sim.set(f"sim-d{kind}", **_behaviour(script))
    path, body = _request(kind, tools)
    reply = gw.http.post(path, json=body)
    conversation = reply.headers.get("x-bench-conversation", "")
    secrets = [conversation] if conversation else []
    kept = ("content-type", "x-bench-model", "x-bench-dropped", "retry-after")
    return {
        "status": reply.status_code,
        "headers": {k: reply.headers.get(k) for k in kept},
        "body": _normal(reply.text, secrets),
        "secrets": secrets,
    }


def _same(seen: dict[str, Any], what: str) -> None:
    """The two readers saw the same; else the difference, line by line."""
    ours, theirs = (json.dumps(seen[r], indent=1).splitlines() for r in ("direct", "litellm"))
    diff = "\n".join(difflib.unified_diff(theirs, ours, "litellm", "direct", lineterm=""))
    assert not diff, f"{what}:\n{diff}"


def _record(row: dict[str, Any], secrets: list[str]) -> Any:
    return _normal(json.dumps(row), secrets)


@pytest.mark.parametrize("case", list(STREAMS))
def test_a_route_turn_reads_the_same_through_either_reader(pair, sim, case):
    script, tools = STREAMS[case]
    for kind in range(len(KINDS)):
        seen = {}
        for reader, (gw, store) in pair.items():
            before = len(_rows(store, 0))
            got = _ask(gw, sim, kind, script, tools)
            rows = _rows(store, before + 1)[before:]
            got["records"] = [_record(r, got.pop("secrets")) for r in rows]
            seen[reader] = got
        _same(seen, f"{case}: {KINDS[kind]}")
        agents = {entry["user_agent"] for entry in sim.log(f"sim-d{kind}")}
        assert len(agents) == 2, "each reader made its own request"


@pytest.mark.parametrize("case", list(ANSWERS))
@pytest.mark.parametrize("streamed", [False, True])
def test_a_panel_seat_reads_the_same_through_either_reader(pair, sim, case, streamed):
    _same(_panels(pair, sim, ANSWERS[case], streamed), case)


@pytest.mark.parametrize("case", list(STREAMS))
def test_a_streamed_panel_seat_reads_the_same_through_either_reader(streaming_pair, sim, case):
    _same(_panels(streaming_pair, sim, STREAMS[case][0], True), case)


def _panels(pair: dict[str, Any], sim, script: dict[str, Any], streamed: bool) -> dict[str, Any]:
    seen = {}
    for reader, (gw, store) in pair.items():
        sim.set("sim-d0", **_behaviour(script))
        body = {"model": "p0", "messages": [{"role": "user", "content": "Why?"}]}
        reply = gw.http.post("/v1/chat/completions", json={**body, "stream": streamed})
        panel = reply.headers.get("x-bench-panel", "")
        rows = _rows(store, 1)
        models = gw.http.get("/bench/models").json()["models"]
        seen[reader] = {
            "status": reply.status_code,
            "retry-after": reply.headers.get("retry-after"),
            "body": _normal(reply.text, [panel]),
            "records": [_record(r, [panel]) for r in rows],
            "cooling": [(m["alias"], m["cooling_why"]) for m in models],
        }
    return seen


# a stream that stops sending halfway, its connection left open: a seat's ends at its
# seat_timeout_s, a route turn's at stall_s (litellm's read timeout, seat_timeout_s, later)
STALLED = {"flood": {"head": "".join([ROLE, *TEXT[:2]]), "end": "stall",
                     "content_type": "text/event-stream"}}  # fmt: skip


@pytest.fixture
def stalling_pair(make_gateway, sim, tmp_path: Path):
    return _pair(make_gateway, sim, tmp_path, stall_s=0.5, seat_timeout_s=2,
                 stream_seats="always")  # fmt: skip


def test_a_stalled_route_turn_reads_the_same_through_either_reader(stalling_pair, sim):
    for kind in range(len(KINDS)):
        seen = {}
        for reader, (gw, store) in stalling_pair.items():
            before = len(_rows(store, 0))
            got = _ask(gw, sim, kind, STALLED, False)
            rows = _rows(store, before + 1)[before:]
            got["records"] = [_record(r, got.pop("secrets")) for r in rows]
            seen[reader] = got
        _same(seen, f"stalled: {KINDS[kind]}")
        assert "nothing within 0.5 s" in json.dumps(seen["direct"]["records"])


def test_a_stalled_streamed_panel_seat_reads_the_same_through_either_reader(stalling_pair, sim):
    seen = _panels(stalling_pair, sim, STALLED, True)
    _same(seen, "stalled")
    assert seen["direct"]["records"][0]["status"] == "timeout"


def test_an_unreachable_upstream_reads_the_same_through_either_reader(make_gateway, sim, tmp_path):
    seen = {}
    for reader in ("litellm", "direct"):
        raw = _raw(sim.url, reader)
        closed = "http://127.0.0.1:9/v1"  # the discard port: nothing listens on loopback
        raw["model_list"][0]["litellm_params"]["api_base"] = closed
        store = tmp_path / f"{reader}.db"
        gw = make_gateway(raw, store=store)
        body = {"model": "p0", "messages": [{"role": "user", "content": "Why?"}]}
        reply = gw.http.post("/v1/chat/completions", json=body)
        panel = reply.headers.get("x-bench-panel", "")
        turn = gw.http.post("/v1/chat/completions", json={**body, "model": "r0"})
        seen[reader] = {
            "status": reply.status_code,
            "body": _normal(reply.text, [panel]),
            "turn": [turn.status_code, _normal(turn.text, [])],
            "records": [_record(r, [panel]) for r in _rows(store, 1)],
        }
    _same(seen, "connection refused")

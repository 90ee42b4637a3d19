"""Properties over whatever a client can send: never a 500, every error OpenAI-shaped, and a
refused request (4xx) reaches no upstream and writes no record.

One simulated upstream and one gateway serve the whole module (real uvicorn, real litellm, real
SQLite); each example compares the upstream's request log and the store's row counts before and
after its request. Valid requests that happen to succeed are fine: the properties are about
refusals and crashes.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import Phase, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from gateway.app import create_app
from gateway.config.settings import parse_config
from gateway.serve.server import ServerThread
from simulator import create_sim_app
from tests.helpers.bench import MODELS, bench_raw

BODY_LIMIT = 1_000_000  # this module's max_body_bytes; the verdict route's own limit is the same
TABLES = ("panels", "calls", "verdicts")
SHAPES = ("general", "design", "prose", "review", "code", "enumeration", "quick", "vision")
USER = [{"role": "user", "content": "Is the retry loop safe?"}]
VALID = {"model": "bench/trio", "messages": USER}
ERROR_KEYS = {"message", "type", "param", "code"}

# No example database: nothing is left in the working tree, and the inputs known to matter are
# pinned with @example so every run tries them.
# No explain phase either: it traces every line, which is slow and says little over HTTP.
PHASES = (Phase.explicit, Phase.generate, Phase.target, Phase.shrink)
FEW = settings(max_examples=40, deadline=None, database=None, phases=PHASES)
SOME = settings(max_examples=100, deadline=None, database=None, phases=PHASES)
MANY = settings(max_examples=200, deadline=None, database=None, phases=PHASES)


# --- the gateway under test ------------------------------------------------------------------


class Bench:
    """The module's gateway, and what a property needs to see around each request."""

    def __init__(self, url: str, http: httpx.Client, sim: ServerThread, db: Any, first: dict):
        self.url, self.http, self.sim, self.db = url, http, sim, db
        self.sim_state = sim.server.config.app.state.sim
        self.panel = first["panel"]
        self.call = first["seats"][0]["call"]  # a real call, so verdicts can also succeed

    def __repr__(self) -> str:
        return f"<gateway {self.url}>"

    def snapshot(self) -> tuple[int, dict[str, int]]:
        with sqlite3.connect(self.db) as db:
            rows = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
        return len(self.sim_state.requests), rows

    @contextlib.contextmanager
    def settling(self) -> Iterator[None]:
        """On a failure, let both servers finish logging before pytest reports it.

        uvicorn logs an app's exception just after its 500 goes out, formatting the traceback on
        the server's thread, and CPython 3.11's traceback carets call ast.parse, which is not
        thread-safe against pytest's own ast.parse while it reports a failure: the clash is an
        INTERNALERROR that ends the whole session. A server's loop answers nothing else until
        its log call returns, so one more answered request from each means the logs are done.
        """
        try:
            yield
        except BaseException:
            with contextlib.suppress(httpx.HTTPError):
                self.http.get("/healthz")
                self.http.get(f"{self.sim.url}/healthz")
            raise


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    sim = ServerThread(create_sim_app({"models": {"*": {"latency_s": 0}}})).start()
    tmp = tmp_path_factory.mktemp("properties")
    raw = bench_raw(sim.url, max_body_bytes=BODY_LIMIT)
    raw["store"] = f"sqlite:///{tmp / 'records.db'}"
    gateway = ServerThread(create_app(parse_config(raw, base=tmp))).start()
    # No keep-alive: after a crash the server may close a pooled connection under the next
    # request, which would read as a client error rather than the gateway's answer.
    http = httpx.Client(
        base_url=gateway.url, timeout=60, limits=httpx.Limits(max_keepalive_connections=0)
    )
    first = http.post("/v1/chat/completions", json=VALID)
    assert first.status_code == 200, first.text
    yield Bench(gateway.url, http, sim, tmp / "records.db", first.json()["bench"])
    http.close()
    gateway.stop()
    sim.stop()


# --- the properties --------------------------------------------------------------------------


def assert_openai_error(payload: Any, where: str) -> None:
    assert isinstance(payload, dict) and isinstance(payload.get("error"), dict), where
    error = payload["error"]
    assert set(error) == ERROR_KEYS, f"{where}: error keys {sorted(error)}"
    assert isinstance(error["message"], str) and error["message"], where
    assert isinstance(error["type"], str) and error["type"], where
    assert error["param"] is None or isinstance(error["param"], str), where
    assert error["code"] is None or isinstance(error["code"], str), where


def sse_events(text: str) -> list[Any]:
    events = []
    for line in text.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            events.append(json.loads(line[len("data: ") :]))
    return events


def holds(bench: Bench, response: httpx.Response, before: tuple[int, dict[str, int]]) -> None:
    """Never a 500; every error OpenAI-shaped; a refusal calls nobody and writes nothing."""
    with bench.settling():
        _holds(bench, response, before)


def _holds(bench: Bench, response: httpx.Response, before: tuple[int, dict[str, int]]) -> None:
    status = response.status_code
    if currently_in_test_context():
        event(f"status {status}")  # shown by --hypothesis-show-statistics
    where = f"{response.request.method} {response.request.url.path[:80]} -> {status}"
    assert status != 500, f"{where}: {response.text[:500]}"
    if 300 <= status < 400:
        # Starlette's redirect_slashes: `/bench/calls/x/` (also spelt `x%2F`) is sent to
        # `/bench/calls/x`. A redirect is not an error, but it must say where to go.
        assert response.headers.get("location"), f"{where}: a redirect without a Location"
    elif status >= 400:
        try:
            payload = response.json()
        except ValueError:
            pytest.fail(f"{where}: the error body is not JSON: {response.text[:200]!r}")
        assert_openai_error(payload, where)
    elif response.headers.get("content-type", "").startswith("text/event-stream"):
        for chunk in sse_events(response.text):
            if "error" in chunk:  # an error after the 200 went out is an in-stream event
                assert_openai_error(chunk, f"{where} (in-stream)")
                assert chunk["error"]["type"] != "server_error", chunk
    if 400 <= status < 500:
        after = bench.snapshot()
        assert after[0] == before[0], f"{where}: a refused request reached the upstream"
        assert after[1] == before[1], f"{where}: a refused request wrote {after[1]} vs {before[1]}"


def post(bench: Bench, path: str, body: bytes, headers: dict | None = None) -> None:
    before = bench.snapshot()
    response = bench.http.post(path, content=body, headers=headers)
    holds(bench, response, before)


def chat(bench: Bench, body: bytes, headers: dict | None = None) -> None:
    post(bench, "/v1/chat/completions", body, headers)


# --- strategies ------------------------------------------------------------------------------

TOP_FIELDS = (
    "model",
    "messages",
    "stream",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "stop",
    "user",
    "response_format",
    "logit_bias",
    "reasoning_effort",
    "with",
    "bench",
    "n",
    "stream_options",
    "metadata",
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "parallel_tool_calls",
)
# Where a value can be put in an otherwise valid body: top-level fields and nested ones.
PLACES = (
    *TOP_FIELDS,
    "messages[0]",
    "messages[0].role",
    "messages[0].content",
    "messages[0].content[0]",
    "messages[0].content[0].text",
    "messages[0].name",
    "messages[0].tool_calls",
    "with[0]",
    "bench.reply",
)

plain_text = st.text(max_size=12)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | plain_text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(plain_text, inner, max_size=4),
    max_leaves=12,
)
bodies = json_values | st.dictionaries(st.sampled_from(TOP_FIELDS) | plain_text, json_values)


def place(value: Any, where: str) -> dict:
    """A valid chat body with `value` put at `where` (creating the path where needed)."""
    body = json.loads(json.dumps(VALID))
    if where == "messages[0].content[0]" or where == "messages[0].content[0].text":
        body["messages"][0]["content"] = [{"type": "text", "text": "Is the retry loop safe?"}]
    if where == "with[0]":
        body["with"] = [value]
        return body
    if where == "bench.reply":
        body["bench"] = {"reply": value}
        return body
    target: Any = body
    parts = where.replace("]", "").replace("[", ".").split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    last = parts[-1]
    if last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return body


def without(where: str) -> dict:
    body = json.loads(json.dumps(VALID))
    if where in body:
        del body[where]
    elif where.startswith("messages[0].") and "[" not in where[len("messages[0].") :]:
        body["messages"][0].pop(where[len("messages[0].") :], None)
    return body


def dump(body: Any, *, ascii_only: bool = True) -> bytes:
    return json.dumps(body, ensure_ascii=ascii_only, allow_nan=True).encode("utf-8")


# --- chat completions ------------------------------------------------------------------------


@MANY
@given(body=bodies)
@example(body={"model": "bench/trio", "messages": USER, "temperature": float("nan")})
@example(body={"model": "bench/trio", "messages": USER, "stream": True, "top_p": float("inf")})
@example(body={"model": "bench/panel", "messages": [{"role": "user", "content": []}]})
def test_any_json_body_is_answered_or_refused_cleanly(bench, body):
    chat(bench, dump(body))


@MANY
@given(where=st.sampled_from(PLACES), value=json_values)
@example(where="messages[0].role", value=[])
@example(where="stream", value="true")
@example(where="messages[0].content", value=[{"text": None}])
@example(where="messages[0].content[0].text", value=[[["deep"]]])
@example(where="bench.reply", value=["merged"])
@example(where="model", value="bench/trio:merged")
def test_any_value_in_any_known_field_is_answered_or_refused_cleanly(bench, where, value):
    chat(bench, dump(place(value, where)))


@pytest.mark.parametrize("where", ["model", "messages", "messages[0].role", "messages[0].content"])
def test_a_missing_required_field_is_refused_cleanly(bench, where):
    chat(bench, dump(without(where)))


@FEW
@given(
    where=st.sampled_from(
        (
            "model",
            "messages[0].role",
            "messages[0].content",
            "messages[0].content[0].text",
            "user",
            "stop",
            "with[0]",
            "bench.reply",
            "metadata",
        )
    ),
    size=st.sampled_from((10_000, 200_000, BODY_LIMIT - 200, BODY_LIMIT + 1, 3 * BODY_LIMIT)),
    char=st.sampled_from(("x", "é", "\u202e", "😀", "\x00")),
)
@example(where="messages[0].content", size=BODY_LIMIT // 2, char="x")
@example(where="model", size=BODY_LIMIT // 2, char="x")
def test_huge_strings_in_any_field_are_answered_or_refused_cleanly(bench, where, size, char):
    width = len(dump(char, ascii_only=False)) - 2  # the character's bytes in the body
    chat(bench, dump(place(char * max(1, size // width), where), ascii_only=False))


odd_text = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ("\x00", "\u202e\u2066rtl", "\ufeff", "\uffff", "\U0010ffff", "e\u0301" * 50, "İß", "\u2028")
)


@SOME
@given(
    where=st.sampled_from(PLACES),
    text=odd_text,
    ascii_only=st.booleans(),
)
@example(where="messages[0].content", text="\x00", ascii_only=False)
@example(where="model", text="bench/tri\u0307o", ascii_only=True)
def test_odd_unicode_anywhere_is_answered_or_refused_cleanly(bench, where, text, ascii_only):
    chat(bench, dump(place(text, where), ascii_only=ascii_only))


@FEW
@given(
    where=st.sampled_from(
        (
            "model",
            "messages[0].content",
            "messages[0].content[0].text",
            "messages[0].role",
            "messages[0].name",
            "user",
            "with[0]",
            "bench.reply",
        )
    ),
    surrogate=st.characters(categories=["Cs"]),
)
@example(where="messages[0].content", surrogate="\ud800")
def test_a_lone_surrogate_escaped_in_json_is_refused_not_a_crash(bench, where, surrogate):
    """JSON may spell a lone surrogate as \\udXXX; it is valid JSON text but not valid Unicode,
    so it cannot be stored or passed on, and must be refused like any other malformed field."""
    body = dump(place("before " + surrogate + " after", where))
    assert b"\\ud" in body
    chat(bench, body)


@SOME
@given(raw=st.binary(max_size=300))
@example(raw=b"\xff\xfe\x00{")
@example(raw=b"\xef\xbb\xbf" + dump(VALID))
@example(raw=b"")
def test_arbitrary_bytes_are_answered_or_refused_cleanly(bench, raw):
    chat(bench, raw)


INSIDE_CONTENT = dump(VALID).index(b"Is the retry")


@SOME
@given(garbage=st.binary(min_size=1, max_size=8), at=st.integers(0, len(dump(VALID))))
@example(garbage=b"\xc3\x28", at=INSIDE_CONTENT)
@example(garbage=b"\xed\xa0\x80", at=INSIDE_CONTENT)  # a surrogate encoded as UTF-8 bytes
@example(garbage=b"\xff", at=0)
def test_invalid_utf8_inside_a_valid_body_is_answered_or_refused_cleanly(bench, garbage, at):
    body = dump(VALID)
    chat(bench, body[:at] + garbage + body[at:])


def nested(kind: str, depth: int) -> bytes:
    if kind == "arrays":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


@FEW
@given(
    kind=st.sampled_from(("arrays", "objects")),
    depth=st.sampled_from((10, 500, 900, 990, 1_000, 5_000, 100_000)),
    where=st.sampled_from(("body", "metadata", "response_format", "stop", "content", "verdict")),
)
@example(kind="arrays", depth=100_000, where="body")
@example(kind="objects", depth=100_000, where="body")
@example(kind="arrays", depth=100_000, where="verdict")
def test_deep_nesting_is_answered_or_refused_cleanly(bench, kind, depth, where):
    deep = nested(kind, depth)
    if where == "body":
        return chat(bench, deep)
    if where == "verdict":
        return post(
            bench, "/bench/verdict", b'{"call": "x", "useful": true, "note": ' + deep + b"}"
        )
    if where == "content":
        deep = b'[{"type": "text", "text": ' + deep + b"}]"
        body = b'{"model": "bench/trio", "messages": [{"role": "user", "content": ' + deep + b"}]}"
        return chat(bench, body)
    if where == "response_format":
        deep = b'{"type": ' + deep + b"}"
    chat(bench, dump(VALID)[:-1] + b', "' + where.encode() + b'": ' + deep + b"}")


# --- headers ---------------------------------------------------------------------------------

# Bytes an HTTP/1.1 field value may hold (RFC 9110: VCHAR, obs-text, inner SP/HTAB). Anything
# else is refused by the HTTP parser before the app runs, and no client can send it anyway.
header_bytes = st.binary(max_size=60).map(
    lambda raw: bytes(b if (0x21 <= b <= 0x7E or b >= 0x80) else 0x20 for b in raw).strip()
)
header_values = (
    header_bytes
    | st.sampled_from(SHAPES).map(lambda s: s.upper().encode())
    | st.lists(st.sampled_from([*MODELS, "ghost", "", " "]), max_size=6).map(
        lambda names: ",".join(names).strip().encode()
    )
    | st.integers(1, 8_000).map(lambda n: b"r" * n)
)


@MANY
@given(shape=st.none() | header_values, nominees=st.none() | header_values)
@example(shape=b"REVIEW", nominees=b"alpha,,beta, ghost")
@example(shape=b"\xff\xfe", nominees=b"\xe9t\xe9")
@example(shape=b"review", nominees=b"gamma,gamma,gamma")
def test_any_panel_shape_and_with_headers_are_answered_or_refused_cleanly(bench, shape, nominees):
    headers = {}
    if shape is not None:
        headers["X-Panel-Shape"] = shape
    if nominees is not None:
        headers["X-Panel-With"] = nominees
    chat(bench, dump(VALID), headers)


# --- verdicts --------------------------------------------------------------------------------

VERDICT_FIELDS = ("call", "useful", "note", "real", "false")


@MANY
@given(
    fields=st.dictionaries(st.sampled_from(VERDICT_FIELDS) | plain_text, json_values, max_size=6),
    real_call=st.booleans(),
)
@example(fields={"useful": True}, real_call=True)
@example(fields={"useful": True, "note": "n" * 10_001}, real_call=True)
@example(fields={"useful": 1}, real_call=True)
@example(fields={"call": "p0.member1", "useful": True}, real_call=False)
def test_any_verdict_is_recorded_or_refused_cleanly(bench, fields, real_call):
    body = dict(fields)
    if real_call:
        body["call"] = bench.call
    post(bench, "/bench/verdict", dump(body))


@SOME
@given(body=bodies | st.binary(max_size=200))
@example(body=b"\xed\xa0\x80")
@example(body=[])
def test_any_verdict_body_is_refused_cleanly(bench, body):
    post(bench, "/bench/verdict", body if isinstance(body, bytes) else dump(body))


@FEW
@given(
    where=st.sampled_from(("call", "note", "real", "false")),
    surrogate=st.characters(categories=["Cs"]),
)
@example(where="call", surrogate="\udc00")
@example(where="note", surrogate="\ud83d")
def test_a_lone_surrogate_in_a_verdict_is_refused_not_a_crash(bench, where, surrogate):
    text = "before " + surrogate + " after"
    body: dict[str, Any] = {"call": bench.call, "useful": True}
    body[where] = [text] if where in ("real", "false") else text
    post(bench, "/bench/verdict", dump(body))


@MANY
@given(
    route=st.sampled_from(("calls", "panels")),
    text=st.text(st.characters(codec="utf-8"), min_size=1, max_size=300)
    | st.sampled_from(("..", ".", "%", "%ZZ", "a/b", "\x00", " ", "?x=1", "#frag")),
    real=st.booleans(),
)
@example(route="calls", text="\udc80", real=False)
def test_any_path_text_reads_a_record_or_is_refused_cleanly(bench, route, text, real):
    if real:
        text = bench.call if route == "calls" else bench.panel
    # Every character percent-encoded (dots too, so no client folds `..` away); lone surrogates
    # go out as the bytes they would have in UTF-8's lax form, which is how a client sends them.
    encoded = quote(text.encode("utf-8", "surrogatepass"), safe="").replace(".", "%2E")
    before = bench.snapshot()
    response = bench.http.get(f"/bench/{route}/{encoded}")
    holds(bench, response, before)
    with bench.settling():
        assert response.status_code == 200 or not real, response.text
        assert bench.snapshot() == before, "reading a record changed the store or the upstream"

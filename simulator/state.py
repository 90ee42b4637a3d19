"""The simulated upstream's state: per-model behaviours, checked strictly, and its request log.

A behaviour is a plain dict (keys in ``BEHAVIOUR_KEYS``). A model's own entry *replaces* the ``"*"``
fallback entirely. Unknown keys raise ``ValueError`` so that a typo in a test or spec file fails
loudly instead of silently simulating a healthy model.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypedDict

import yaml

from simulator import flood, listing, suite, timeline
from simulator.clock import Clock, WallClock

_NUM = (int, float)
#: Behaviour key -> (accepted types, default). ``None`` as a value always means "use the default".
BEHAVIOUR_KEYS = MappingProxyType(
    {
        "latency_s": (_NUM, 0.0),
        "answer": ((str,), None),
        "status": ((int,), 200),
        "error_message": ((str,), None),
        "retry_after": (_NUM, None),
        "retry_after_ms": (_NUM, None),
        "fail_times": ((int,), None),
        # the faults hold for this many seconds (on the simulator's clock) after the behaviour
        # was set, then the model is healthy: a provider that flaps, then recovers
        "fail_for_s": (_NUM, None),
        # the faults strike only a request whose last message is a tool's result: an agent's
        # later turn fails while its first is answered (failover in the middle of a session)
        "fail_tool_turns": ((bool,), False),
        # the faults strike only every n-th request since the behaviour was set (a flaky model
        # failing one call in n; simulator/timeline.py)
        "fail_every": ((int,), None),
        # phases on the simulator's clock, [{"at_s": 86400, "status": 404, ...}, {"at_s": ...}]:
        # from its at_s (since the behaviour was set) a phase's keys lie over the model's own
        # (a model withdrawn, then back; simulator/timeline.py)
        "timeline": ((list,), None),
        "hang": ((bool,), False),
        "empty": ((bool,), False),
        "chunk_delay_s": (_NUM, 0.0),
        # streamed: the answer in pieces of this many characters, not 3-word groups (a hostile
        # upstream splitting what it echoes across chunks)
        "chunk_chars": ((int,), None),
        "stream_cut_after": ((int,), None),
        "stream_stall_after": ((int,), None),
        "malformed_chunk": ((bool,), False),
        "no_done": ((bool,), False),
        "reset": ((bool,), False),
        "usage": ((bool,), True),
        # {"name": ..., "arguments": {...}}, or a list of them: when the request offers tools and
        # its last message is not a tool result, answer with these calls (route mode's agents
        # need a model that calls; a list, several calls in one turn, as parallel tool calls are)
        "tool_call": ((dict, list), None),
        # answer from the prompt: points a reviewer would flag in it, a merge when asked to merge
        # a panel; and call an offered tool whose arguments are a place the prompt names
        # (simulator/reading.py: the demo's models show what a merge and a tool call are)
        "reads_prompt": ((bool,), False),
        "calls_offered_tools": ((bool,), False),
        "error_after": ((int,), None),  # streamed: a 500 error event after this many pieces
        # a request whose last message is the assistant's (a prefill to continue) gets a 400,
        # as providers that take no assistant prefill answer it
        "refuses_prefill": ((bool,), False),
        # asked to continue its earlier text, answer whole, repeating it (a model told to go on
        # often starts over); else it answers only what follows that text
        "repeats_prefix": ((bool,), False),
        # a reasoning model: this text streamed as `reasoning_content` deltas before the answer
        # (litellm relays them), and plain in the message's `reasoning_content`
        "reasoning": ((str,), None),
        # streamed: the model thinks this long after its first (role) chunk before its answer's
        # first piece: silent, or with its `reasoning` spread over the time
        "think_s": (_NUM, None),
        # the answer is this many bytes of text, streamed in pieces of `piece_bytes` (an answer
        # too large to hold: the pieces are one string, sent again and again)
        "answer_bytes": ((int,), None),
        "piece_bytes": ((int,), 65536),
        # response headers sent with every reply, success or error (a provider's rate-limit
        # headers: x-ratelimit-remaining-requests, X-RateLimit-Reset, RateLimit, ...)
        "headers": ((dict,), None),
        # the reply exactly as given, whatever was asked: {"status": 200, "headers": {...},
        # "content_type": "text/event-stream", "parts": ["data: ...\\n\\n", ...], "cut": false}.
        # Each part is one write (a lone surrogate such as "\\udcff" is that raw byte: bytes
        # that are not UTF-8); "cut" closes the connection after the parts instead of ending
        # the body (a provider's answers replayed byte for byte, faults included)
        "script": ((dict,), None),
        # a reply made as it is sent, too large to script: a gigabyte, an endless line, a
        # compressed bomb (simulator/flood.py)
        "flood": ((dict,), None),
        # asked a suite task (simulator/suite.py), answer it right with this probability, the same
        # model and task always alike; `suite_dirs`: folders of task files beside the shipped ones
        "suite_skill": (_NUM, None),
        "suite_dirs": ((list,), None),
        # how the provider's listing states this model: false, missing from it; or what its
        # entry says (free, expires, context_length, tools: simulator/listing.py)
        "listing": ((dict, bool), None),
        # a prompt over this many tokens (characters / 4) is refused with a 400 naming the
        # window, as providers refuse one (simulator/window.py)
        "context_window": ((int,), None),
    }
)
#: Behaviour key -> value; every key present once defaults are filled in (``behaviour_for``).
Behaviour = dict[str, Any]


class LoggedRequest(TypedDict):
    """One request in the log, as ``/_sim/requests`` returns it."""

    model: str
    stream: bool
    started: float
    ended: float | None
    status: int | None
    n: int  # this model's requests since the last reset
    outcome: str | None
    max_tokens: object
    temperature: object
    images: list[str]  # the image URLs the messages carried
    body: dict[str, Any]  # what the caller sent, for tests of what reached a model
    response_format: object
    user_agent: str  # who sent it: the OpenAI SDK (litellm's path) names itself, aiohttp bare


_FAULT_KEYS = (
    "status",
    "hang",
    "reset",
    "empty",
    "stream_cut_after",
    "stream_stall_after",
    "malformed_chunk",
    "no_done",
    "error_after",
    "refuses_prefill",
)


def validate_behaviour(behaviour: Any) -> Behaviour:
    """Return a checked copy of *behaviour*; raise ValueError naming the first bad key."""
    if not isinstance(behaviour, dict):
        raise ValueError(f"a simulator behaviour must be a mapping, got {behaviour!r}")
    for key, value in behaviour.items():
        if key not in BEHAVIOUR_KEYS:
            raise ValueError(
                f"unknown simulator behaviour key {key!r}; known keys: {', '.join(BEHAVIOUR_KEYS)}"
            )
        types = BEHAVIOUR_KEYS[key][0]
        if value is not None and (
            not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
        ):
            names = " or ".join(t.__name__ for t in types)
            raise ValueError(f"simulator behaviour key {key!r} must be {names}, got {value!r}")
    headers = behaviour.get("headers")
    if headers is not None and not all(
        isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
        for k, v in headers.items()
    ):
        raise ValueError(
            f"simulator behaviour key 'headers' must map names to values, got {headers!r}"
        )
    calls = behaviour.get("tool_call")
    if isinstance(calls, list) and not (calls and all(isinstance(c, dict) for c in calls)):
        raise ValueError(f"simulator behaviour key 'tool_call' must list calls, got {calls!r}")
    script = behaviour.get("script")
    if script is not None:
        _check_script(script)
    if behaviour.get("flood") is not None:
        flood.check(behaviour["flood"])
    suite.check(behaviour.get("suite_dirs"))
    if behaviour.get("timeline") is not None:
        timeline.check(behaviour["timeline"], validate_behaviour)
    if behaviour.get("fail_every") is not None and behaviour["fail_every"] < 1:
        raise ValueError("simulator behaviour key 'fail_every' must be 1 or more")
    if behaviour.get("listing") is not None:
        listing.check(behaviour["listing"])
    status = behaviour.get("status")
    if status is not None and status != 200 and not 400 <= status <= 599:
        raise ValueError(f"simulator behaviour key 'status' must be 200 or 4xx/5xx, got {status}")
    return dict(behaviour)


_SCRIPT_KEYS = {"status": int, "headers": dict, "content_type": str, "parts": list, "cut": bool}


def _check_script(script: dict[str, Any]) -> None:
    for key, value in script.items():
        kind = _SCRIPT_KEYS.get(key)
        if kind is None or not isinstance(value, kind):
            known = ", ".join(_SCRIPT_KEYS)
            raise ValueError(f"simulator script key {key!r} is unknown or mistyped ({known})")
    if not all(isinstance(part, str) for part in script.get("parts", [])):
        raise ValueError("simulator script parts must be strings")


def _models_of(spec: Any) -> dict[str, Behaviour]:
    """Accept ``{"models": {name: behaviour}}`` or a bare ``{name: behaviour}``; validate all."""
    if not spec:
        return {}
    if not isinstance(spec, dict):
        raise ValueError(f"a simulator spec must be a mapping, got {type(spec).__name__}")
    if "models" in spec:
        if len(spec) > 1:
            extra = sorted(str(k) for k in spec if k != "models")
            raise ValueError(f"unknown top-level simulator spec keys: {extra}")
        spec = spec["models"] or {}
        if not isinstance(spec, dict):
            raise ValueError("simulator spec 'models' must be a mapping of name -> behaviour")
    return {str(name): validate_behaviour(b or {}) for name, b in spec.items()}


def load_spec(path: str | Path) -> dict[str, dict[str, Behaviour]]:
    """Read a YAML or JSON spec file; return it normalised as ``{"models": {...}}``. A file that
    does not parse is a ValueError naming it (read as a file, so YAML's own message does)."""
    with open(path, encoding="utf-8") as file:
        try:
            data = json.load(file) if str(path).endswith(".json") else yaml.safe_load(file)
        except (yaml.YAMLError, json.JSONDecodeError) as exc:
            kind = "JSON" if str(path).endswith(".json") else "YAML"
            raise ValueError(f"simulator spec {path} is not valid {kind}: {exc}") from None
    return {"models": _models_of(data)}


class SimState:
    """All mutable simulator state, owned by one app as ``app.state.sim``.

    It lives on the app, not in module globals, so several simulators (one per test, or one per
    fake provider in a benchmark) can share a process without seeing each other. Everything runs
    on the server's single event loop, so plain list appends need no lock.
    """

    def __init__(self, spec: dict[str, Any] | None = None, clock: Clock | None = None) -> None:
        self._spec = _models_of(spec)
        self.clock: Clock = clock or WallClock()
        self.behaviours: dict[str, Behaviour] = {}
        self.requests: list[LoggedRequest] = []
        self._seq: dict[str, int] = {}  # model -> requests since reset (the log's "n")
        self._attempts: dict[str, int] = {}  # model -> requests since behaviour set (fail_times)
        self._set_at: dict[str, float] = {}  # model -> when its behaviour was set (fail_for_s)
        self.reset()

    def set(self, model: str, /, **behaviour: Any) -> None:
        """Replace *model*'s behaviour (``"*"`` = fallback) and restart its fail_times count."""
        self.behaviours[model] = validate_behaviour(behaviour)
        self._set_at[model] = self.clock.now()
        if model == "*":  # models riding on the fallback start counting afresh as well
            self._attempts = {m: c for m, c in self._attempts.items() if m in self.behaviours}
        else:
            self._attempts.pop(model, None)

    def reset(self) -> None:
        """Back to the spec given at creation, with an empty log (cleared in place)."""
        self.behaviours = {name: dict(b) for name, b in self._spec.items()}
        self.requests.clear()
        self._seq.clear()
        self._attempts.clear()
        self._set_at = dict.fromkeys(self.behaviours, self.clock.now())

    def log_for(self, model: str) -> list[LoggedRequest]:
        return [r for r in self.requests if r["model"] == model]

    def behaviour_for(self, model: str) -> Behaviour:
        """The effective behaviour for *model* now (its timeline's phase in force), with every
        key present (defaults filled in)."""
        key = model if model in self.behaviours else "*"
        since = self._set_at.get(key)
        elapsed = None if since is None else self.clock.now() - since
        own = timeline.in_force(self.behaviours.get(key, {}), elapsed)
        return {k: d if own.get(k) is None else own[k] for k, (_, d) in BEHAVIOUR_KEYS.items()}

    def recovered(self, model: str, behaviour: Behaviour, attempt: int) -> bool:
        """Has *model* stopped failing (past its `fail_times` requests or its `fail_for_s`), or
        is this request one its `fail_every` spares?"""
        if behaviour["fail_times"] is not None and attempt > behaviour["fail_times"]:
            return True
        if timeline.spared(behaviour["fail_every"], attempt):
            return True
        since = self._set_at.get(model if model in self.behaviours else "*")
        limit = behaviour["fail_for_s"]
        return limit is not None and since is not None and self.clock.now() - since >= limit

    def begin(
        self, model: str, payload: dict[str, Any], user_agent: str = ""
    ) -> tuple[LoggedRequest, int]:
        """Log a newly arrived request; return its log entry and its fail_times attempt number."""
        self._seq[model] = n = self._seq.get(model, 0) + 1
        self._attempts[model] = attempt = self._attempts.get(model, 0) + 1
        entry: LoggedRequest = {
            "model": model,
            "stream": bool(payload.get("stream")),
            "started": self.clock.now(),
            "ended": None,
            "status": None,
            "n": n,
            "outcome": None,
            "max_tokens": payload.get("max_tokens", payload.get("max_completion_tokens")),
            "temperature": payload.get("temperature"),
            "images": _image_urls(payload.get("messages")),
            "body": payload,  # what the caller sent, for tests of what reached a model
            "response_format": payload.get("response_format"),
            "user_agent": user_agent,
        }
        self.requests.append(entry)
        return entry, attempt


def _image_urls(messages: Any) -> list[str]:
    """The URL of every image part the request carried, so a test can see images arrived."""
    urls = []
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == "image_url":
                image = part.get("image_url")
                url = image.get("url") if isinstance(image, dict) else image
                urls.append(url if isinstance(url, str) else "")
    return urls

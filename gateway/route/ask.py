"""What an agent's turn asks for, in no client's format (`RouteAsk`), whether a request asks
for route mode at all (`wanted`): the `:route` suffix, `"bench": {"reply": "route"}`, or a
collection whose `reply` is route; and the session it names, if any (`session_named`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.config.settings import Config
from gateway.request.bounds import json_object
from gateway.request.hints import NO_HINTS, Hints

ROUTE = ":route"


@dataclass(frozen=True)
class RouteAsk:
    requested_model: str
    collection: str
    request: dict[str, Any]  # OpenAI chat kwargs passed on as they are (messages, tools, ...)
    stream: bool
    options: dict[str, Any] = field(default_factory=dict)  # the format's own (include_usage)
    hints: Hints = NO_HINTS  # what each member is given where it takes it, or told was dropped
    session: str | None = None  # the session the client names, if it names one

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.request["messages"]
        return messages

    @property
    def continues(self) -> bool:
        """Does the request carry earlier turns (an assistant message or a tool result)?"""
        return any(m.get("role") in ("assistant", "tool", "function") for m in self.messages)


# The headers agents name their sessions in, first the gateway's own: Claude Code's, Codex's
# (`thread-id` before `session-id`: a sub-agent has its own thread), opencode's.
SESSION_HEADERS = ("x-bench-conversation", "x-claude-code-session-id", "thread-id",
                   "session-id", "x-session-id", "x-session-affinity")  # fmt: skip
MAX_SESSION = 200  # characters of a session id kept


def session_named(headers: dict[str, str], from_body: str | None) -> str | None:
    """The session a request names: `X-Bench-Conversation`, else the one its body names (an
    Anthropic `metadata.user_id`'s `session_id`, a Responses `prompt_cache_key`), else an
    agent's session header; None when it names none. *headers* lower-cased."""
    found = [headers.get(SESSION_HEADERS[0]), from_body]
    found += [headers.get(name) for name in SESSION_HEADERS[1:]]
    named = next((s.strip() for s in found if isinstance(s, str) and s.strip()), None)
    return None if named is None else named[:MAX_SESSION]


def wanted(model: Any, options: Any, config: Config) -> str | None:
    """The collection when route mode is asked for (the `:route` suffix, `"bench": {"reply":
    "route"}`, or a collection whose `reply` is route); else None."""
    if not isinstance(model, str):
        return None
    name = model.removeprefix("bench/")
    if name.endswith(ROUTE):
        return name.removesuffix(ROUTE)
    if isinstance(options, dict) and options.get("reply") == "route":
        return name
    found = config.catalog.collection(name)
    return name if found is not None and found.reply == "route" else None


def asked(raw: bytes, path_model: str | None, config: Config) -> tuple[dict[str, Any], str] | None:
    """(body, collection) when a request body asks for route mode, else None. *path_model*: the
    model a Gemini path names. The body is parsed here only when it may ask for it (the word
    `route` is in it, in the path, or some collection routes by default): a panel's body is
    parsed once, by its format."""
    if (
        b"route" not in raw
        and not config.route_collections
        and not (path_model is not None and "route" in path_model)
    ):
        return None
    body = json_object(raw)
    collection = wanted(path_model or body.get("model"), body.get("bench"), config)
    return None if collection is None else (body, collection)

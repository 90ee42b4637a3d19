"""What an agent's turn asks for, in no client's format (`RouteAsk`), whether a request asks
for route mode at all (`wanted`, read with the body by the `Door`): the `:route` suffix,
`"bench": {"reply": "route"}`, or a collection whose `reply` is route; and the session it
names, if any (`session_named`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from gateway.config.schema import GatewaySettings
from gateway.config.settings import Config
from gateway.request.body import Check
from gateway.request.bounds import bounded_turn
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


def wanted(model: Any, options: Any, routes: Collection[str]) -> str | None:
    """The collection when route mode is asked for (the `:route` suffix, `"bench": {"reply":
    "route"}`, or a collection among *routes*, those whose `reply` is route); else None."""
    if not isinstance(model, str):
        return None
    name = model.removeprefix("bench/")
    if name.endswith(ROUTE):
        return name.removesuffix(ROUTE)
    if isinstance(options, dict) and options.get("reply") == "route":
        return name
    return name if name in routes else None


@dataclass(frozen=True)
class Door:
    """The check every body that asks models is read with (gateway/request/body.py: a heavy one
    in the child process, off the loop): (the collection, the turn's body bounded) for a route
    turn, else (None, the body as the format's own *panel* check makes it). One read for either
    path, so a route turn's body is parsed where a panel's is, within the same bounds. It
    pickles by name (its fields do), and this module imports no litellm."""

    panel: Check
    path_model: str | None  # the model a Gemini path names
    routes: frozenset[str]  # the collections whose `reply` is route

    @classmethod
    def of(cls, panel: Check, path_model: str | None, config: Config) -> Door:
        routes = frozenset(c.name for c in config.catalog.collections if c.reply == "route")
        return cls(panel, path_model, routes)

    def __call__(
        self, body: dict[str, Any], settings: GatewaySettings
    ) -> tuple[str | None, dict[str, Any]]:
        collection = wanted(self.path_model or body.get("model"), body.get("bench"), self.routes)
        if collection is None:
            return None, self.panel(body, settings)
        return collection, bounded_turn(body, settings)

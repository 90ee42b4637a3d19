"""What Claude Code and the Anthropic SDKs send besides a conversation, read once for a panel
and for route mode alike (`plain`): the body made plain for litellm's adapter, its hints, and the
session it names.

- `role: "system"` messages inside `messages` (Claude Code sends one for a model name it does
  not know) are folded into the system text, where the Messages API keeps it.
- `cache_control` marks, wherever they stand (system and message blocks, tools, the top level),
  are taken off and named once: litellm's adapter would drop them unnamed.
- `thinking` (enabled or adaptive) and `output_config.effort` are offered as `reasoning_effort`
  (the effort named wins over adaptive thinking's default); `output_config.format` (a JSON
  schema, a real output requirement) as `response_format`; `context_management`, `top_k` and
  `metadata.user_id` (as `user`) as themselves: each is given where the model's provider takes
  it and otherwise named in `X-Bench-Dropped` (gateway/request/hints.py). `thinking: disabled`
  asks for what a request without thinking gets, so it is honoured by leaving it out.
- Betas (the `anthropic-beta` header, a `betas` field), provider options (`service_tier` other
  than auto, `speed`, `inference_geo`), server-side resources (`mcp_servers`, `container`) and
  any field the gateway does not know are named as dropped; so are tools that are not custom
  ones (Anthropic's server tools, and its schema-less client tools such as `bash_20250124`),
  each as `tools[<name>]`.
- `metadata.user_id` as Claude Code sends it, a JSON object in a string, names the session
  (its `session_id`) that route mode keys the conversation by.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gateway.errors import BadRequest
from gateway.request.bounds import whole
from gateway.request.hints import Hints

# Fields the adapter reads (the conversation and sampling), kept in the body.
KEPT = frozenset({"model", "messages", "system", "max_tokens", "temperature", "top_p",
                  "stop_sequences", "stream", "tools", "tool_choice", "with", "bench"})  # fmt: skip
_DEFAULTS = {"service_tier": ("auto", "standard_only"), "speed": ("standard",)}
_EFFORTS = {"low": "low", "medium": "medium", "high": "high", "max": "high", "xhigh": "high"}
_THINKING = ("enabled", "disabled", "adaptive")


@dataclass(frozen=True)
class Plain:
    body: dict[str, Any]  # the fields in KEPT, system-role messages folded, no cache_control
    hints: Hints
    session: str | None  # the session metadata.user_id names, if it names one


def plain(body: dict[str, Any], headers: dict[str, str]) -> Plain:
    """*body* read as gateway/formats/anthropic says; *headers* lower-cased."""
    found = Hints()
    if headers.get("anthropic-beta"):
        found = found.drop("anthropic-beta")
    kept = {field: value for field, value in body.items() if field in KEPT}
    unread = (f for f, v in body.items() if f not in KEPT and f not in _READ_BELOW)
    found = found.drop(*(f for f in unread if body[f] is not None and not _default(f, body[f])))
    if _has_cache_control(kept) or body.get("cache_control") is not None:
        found = found.drop("cache_control")
        kept = _without_cache_control(kept)
    kept = _system_folded(kept)
    found = _efforts(body, found)
    if body.get("context_management") is not None:
        found = found.offer("context_management", body["context_management"], "context_management")
    top_k = whole(body.get("top_k"))
    if body.get("top_k") is not None:
        if top_k is None or top_k < 0:
            raise BadRequest("`top_k` must be a whole number of at least 0.", param="top_k")
        found = found.offer("top_k", top_k, "top_k")
    user, session = _user(body.get("metadata"))
    if user is not None:
        found = found.offer("user", user, "metadata.user_id")
    kept, found = _custom_tools(kept, found)
    return Plain(kept, found, session)


# Read by this module into hints; any other field outside KEPT is named as dropped.
_READ_BELOW = frozenset({"thinking", "output_config", "context_management", "top_k", "metadata",
                         "cache_control"})  # fmt: skip


def _default(field: str, value: Any) -> bool:
    """A provider option at its default asks for nothing."""
    return value in _DEFAULTS.get(field, ())


def _efforts(body: dict[str, Any], found: Hints) -> Hints:
    config = body.get("output_config")
    if config is not None:
        if not isinstance(config, dict):
            raise BadRequest("`output_config` must be an object.", param="output_config")
        effort = config.get("effort")
        if effort is not None:
            if not isinstance(effort, str) or effort not in _EFFORTS:
                raise BadRequest(
                    f"`output_config.effort` must be one of {', '.join(_EFFORTS)}.",
                    param="output_config.effort",
                )
            found = found.offer("reasoning_effort", _EFFORTS[effort], "output_config.effort")
        shape = config.get("format")
        if shape is not None:
            found = found.offer("response_format", _response_format(shape), "output_config.format")
        found = found.drop(*(f"output_config.{k}" for k in config if k not in ("effort", "format")))
    thinking = body.get("thinking")
    if thinking is None:
        return found
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    budget = whole(budget)
    if kind not in _THINKING or (kind == "enabled" and (budget is None or budget < 0)):
        raise BadRequest(
            "`thinking` must be {type: enabled, budget_tokens: N}, adaptive or disabled.",
            param="thinking",
        )
    if kind == "disabled":
        return found
    effort = _effort_of_budget(budget) if isinstance(budget, int) else "medium"  # adaptive
    return found.offer("reasoning_effort", effort, "thinking")


def _effort_of_budget(budget: int) -> str:
    """A thinking budget as an effort, on the scale litellm's adapter uses."""
    return "low" if budget < 4096 else "medium" if budget < 16384 else "high"


def _response_format(shape: Any) -> dict[str, Any]:
    schema = shape.get("schema") if isinstance(shape, dict) else None
    if not (isinstance(shape, dict) and shape.get("type") == "json_schema") or not isinstance(
        schema, dict
    ):
        raise BadRequest(
            "`output_config.format` must be {type: json_schema, schema: {...}}.",
            param="output_config.format",
        )
    return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}


def _user(metadata: Any) -> tuple[str | None, str | None]:
    """(the user id to pass on, the session it names): Claude Code's user id is a JSON object
    in a string, whose `session_id` names its session."""
    if metadata is None:
        return None, None
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    if (
        not isinstance(metadata, dict)
        or set(metadata) - {"user_id"}
        or not (user is None or isinstance(user, str))
    ):
        raise BadRequest("`metadata` may hold only a string `user_id`.", param="metadata")
    if not user:
        return None, None
    try:
        ids = json.loads(user)
    except ValueError:
        return user, None
    session = ids.get("session_id") if isinstance(ids, dict) else None
    return user, session if isinstance(session, str) and session else None


def _has_cache_control(value: Any) -> bool:
    if isinstance(value, dict):
        return "cache_control" in value or any(_has_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_cache_control(v) for v in value)
    return False


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def _system_folded(body: dict[str, Any]) -> dict[str, Any]:
    """The body with every `role: "system"` message's text appended to `system`, in order."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body
    if not any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
        return body
    blocks = _blocks(body.get("system"), "system")
    rest = []
    for i, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "system":
            blocks.extend(_blocks(message.get("content"), f"messages[{i}].content"))
        else:
            rest.append(message)
    return {**body, "system": blocks, "messages": rest}


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    ):
        return [{"type": "text", "text": b["text"]} for b in content]
    raise BadRequest(f"`{where}` must be a string or a list of text blocks.", param=where)


def _custom_tools(body: dict[str, Any], found: Hints) -> tuple[dict[str, Any], Hints]:
    """Only custom tools (a name and an input schema) can be offered to a member; the others
    are Anthropic's own, run by Anthropic or defined without a schema: named as dropped."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return body, found
    custom = []
    for tool in tools:
        kind = tool.get("type", "custom") if isinstance(tool, dict) else "custom"
        if kind in ("custom", None):
            custom.append(tool)
        else:
            found = found.drop(f"tools[{tool.get('name') or kind}]")
    if custom:
        return {**body, "tools": custom}, found
    return {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}, found

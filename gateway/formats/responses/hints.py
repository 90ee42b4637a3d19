"""What Codex and the other Responses clients send besides the conversation, read once for route
mode and for a panel: the hint fields, the tools a member can be offered, and the session.

- `reasoning.effort`, `text.verbosity`, `prompt_cache_key`, `parallel_tool_calls` and OpenAI's
  other hint fields are offered as the chat parameters they are (gateway/request/hints.py): given
  where the member's provider takes them, named in `X-Bench-Dropped` otherwise.
- `reasoning.summary`, `include` (a member's encrypted reasoning cannot be handed back),
  Codex's `client_metadata`, `store: true` (the gateway keeps no responses) and any field the
  gateway does not know are named as dropped; `store: false` is what the gateway does anyway.
- Function tools pass on; a `namespace` tool's functions are flattened into function tools
  named `<namespace>__<name>` (litellm reads a later turn's namespaced `function_call` items the
  same way), and a call of one comes back as its `name` and `namespace` (`Namespaces`); hosted
  tools (`web_search`, `file_search`, `code_interpreter`, computer use, `tool_search`, MCP, ...)
  and custom (grammar) tools cannot run through a chat member and are named as dropped, each
  `tools[<name or type>]`.
- `prompt_cache_key` is also the session the conversation is keyed by (Codex sends its
  session id there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.errors import BadRequest
from gateway.request.hints import CHAT_HINTS, Hints, chat_hints

SEPARATOR = "__"
# Read by the format itself (route.py, read.py) or below; anything else is named as dropped.
KNOWN = frozenset({"model", "input", "instructions", "stream", "stream_options", "tools",
                   "tool_choice", "temperature", "top_p", "max_output_tokens", "user", "text",
                   "reasoning", "include", "client_metadata", "store", "previous_response_id",
                   "conversation", "prompt", "background", "with", "bench", "n",
                   *CHAT_HINTS})  # fmt: skip


@dataclass(frozen=True)
class Namespaces:
    """Flattened function name -> (namespace, its own name)."""

    flat: dict[str, tuple[str, str]] = field(default_factory=dict)

    def item(self, item: dict[str, Any]) -> dict[str, Any]:
        """A `function_call` output item with its namespace restored, if it had one."""
        found = self.flat.get(item.get("name") or "")
        if item.get("type") != "function_call" or found is None:
            return item
        return {**item, "name": found[1], "namespace": found[0]}


def hints_of(body: dict[str, Any]) -> Hints:
    stored = body.get("store") is True  # the gateway keeps no responses: named below
    found = chat_hints(body, [name for name in CHAT_HINTS if name != "store" or not stored])
    reasoning = body.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, dict):
            raise BadRequest("`reasoning` must be an object.", param="reasoning")
        effort = reasoning.get("effort")
        if effort is not None:
            if not isinstance(effort, str):
                raise BadRequest("`reasoning.effort` must be a string.", param="reasoning.effort")
            found = found.offer("reasoning_effort", effort, "reasoning.effort")
        found = found.drop(*(f"reasoning.{k}" for k, v in reasoning.items() if k != "effort" and v))
    text = body.get("text")
    if isinstance(text, dict) and text.get("verbosity") is not None:
        found = found.offer("verbosity", text["verbosity"], "text.verbosity")
    for name in ("include", "client_metadata"):
        if body.get(name):
            found = found.drop(name)
    if stored:
        found = found.drop("store")
    return found.drop(*(name for name in body if name not in KNOWN))


def session_of(body: dict[str, Any]) -> str | None:
    key = body.get("prompt_cache_key")
    return key if isinstance(key, str) and key else None


def tools_of(
    tools: Any, found: Hints, *, unique: bool = True
) -> tuple[list[dict[str, Any]], Namespaces, Hints]:
    """The chat tools a member is offered, the namespaces flattened, what was dropped.
    *unique*: two functions of one name are refused (a provider would refuse them; a panel,
    which offers no tools, need not)."""
    if tools is None:
        return [], Namespaces(), found
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list.", param="tools")
    offered: list[dict[str, Any]] = []
    flat: dict[str, tuple[str, str]] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise BadRequest(f"`tools[{i}]` must be an object.", param=f"tools[{i}]")
        kind = tool.get("type")
        if kind == "function":
            offered.append(_function(tool, f"tools[{i}]"))
        elif kind == "namespace" and isinstance(tool.get("name"), str):
            inners = tool.get("tools") or []
            if not isinstance(inners, list):
                raise BadRequest(f"`tools[{i}].tools` must be a list.", param=f"tools[{i}]")
            for j, inner in enumerate(inners):
                if not isinstance(inner, dict) or inner.get("type") != "function":
                    kind = inner.get("type") if isinstance(inner, dict) else None
                    found = found.drop(f"tools[{tool['name']}{SEPARATOR}{kind}]")
                    continue
                _function(inner, f"tools[{i}].tools[{j}]")  # its own name, checked
                name = f"{tool['name']}{SEPARATOR}{inner.get('name')}"
                offered.append(_function({**inner, "name": name}, f"tools[{i}].tools[{j}]"))
                flat[name] = (tool["name"], inner["name"])
        else:
            found = found.drop(f"tools[{tool.get('name') or kind}]")
    names = [t["function"]["name"] for t in offered]
    if unique and len(set(names)) < len(names):
        raise BadRequest("`tools`: two functions have the same name.", param="tools")
    return offered, Namespaces(flat), found


def _function(tool: dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(tool.get("name"), str) or not tool["name"]:
        raise BadRequest(f"`{where}.name` must be a name.", param=where)
    function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": function}


def choice_of(choice: Any, namespaces: Namespaces) -> Any:
    """A Responses `tool_choice` in chat's words (a namespaced function by its flat name)."""
    if isinstance(choice, dict) and choice.get("type") == "function":
        name = choice.get("name")
        if choice.get("namespace"):
            name = f"{choice['namespace']}{SEPARATOR}{name}"
        return {"type": "function", "function": {"name": name}}
    return choice


def dropped_items(input_: Any, found: Hints) -> Hints:
    """Input items litellm leaves out unnamed (a member's encrypted reasoning from an earlier
    turn: no member can read it back) are named as dropped."""
    if isinstance(input_, list) and any(
        isinstance(item, dict) and item.get("type") == "reasoning" for item in input_
    ):
        return found.drop("input[reasoning]")
    return found

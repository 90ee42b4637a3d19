"""Gemini's `tools` and `toolConfig` in route mode, checked before litellm's adapter reads them.

Only `functionDeclarations` can pass on to a member: the other Gemini tools (Google Search,
code execution, URL context, ...) run on Google's side, so they are named as dropped
(`tools[googleSearch]`, in `X-Bench-Dropped`). A schema's `$schema` (which dialect it is
written in) is left out: it constrains nothing, and some providers refuse the keyword. A
declaration's return schema (`response`, `responseJsonSchema`)
is left out: a chat tool has no place for it, and the member reads the result when it comes.
The adapter maps `toolConfig`'s mode but not
`allowedFunctionNames`, so the tool choice is made here: `ANY` with one allowed name is that
function, with several it is `required` over those functions only.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import BadRequest
from gateway.formats.gemini.hints import camel_keys

_DECLARATION = frozenset({"name", "description", "parameters", "parametersJsonSchema"})
# What a function returns: the member reads the result itself when it comes back, and a chat
# tool has no place for it (google-genai sends it for every Python function it declares).
_RETURNS = frozenset({"response", "responseJsonSchema"})
_MODES = {"AUTO": "auto", "MODE_UNSPECIFIED": "auto", "VALIDATED": "auto", "ANY": "required",
          "NONE": "none"}  # fmt: skip


def tools_of(tools: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Every function declaration, checked, as one Gemini tool (none: an empty list), and the
    names of the tools that run on Google's side, dropped."""
    if tools is None:
        return [], []
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list.", param="tools")
    declared: list[dict[str, Any]] = []
    hosted: list[str] = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        tool = camel_keys(tool)
        hosted += [f"tools[{kind}]" for kind in tool if kind != "functionDeclarations"]
        if "functionDeclarations" not in tool:
            continue
        declarations = tool.get("functionDeclarations")
        if not isinstance(declarations, list):
            raise BadRequest(f"`{where}.functionDeclarations` must be a list.", param=where)
        for k, declaration in enumerate(declarations):
            declared.append(_declaration(declaration, f"{where}.functionDeclarations[{k}]"))
    names = [d["name"] for d in declared]
    if len(set(names)) < len(names):
        raise BadRequest("`tools`: two functions have the same name.", param="tools")
    return ([{"functionDeclarations": declared}] if declared else []), hosted


def _declaration(given: Any, where: str) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise BadRequest(f"`{where}` must be an object.", param=where)
    declaration = {k: v for k, v in camel_keys(given).items() if k not in _RETURNS}
    for field in declaration:
        if field not in _DECLARATION:
            raise BadRequest(
                f"`{where}.{field}` cannot be passed on to a member's tools; a declaration takes "
                f"{', '.join(sorted(_DECLARATION))}.",
                param=where,
            )
    name = declaration.get("name")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"`{where}.name` must be a name.", param=where)
    if not isinstance(declaration.get("description", ""), str):
        raise BadRequest(f"`{where}.description` must be a string.", param=where)
    schemas = [declaration[k] for k in ("parameters", "parametersJsonSchema") if k in declaration]
    if len(schemas) > 1 or not all(isinstance(s, dict) for s in schemas):
        raise BadRequest(
            f"`{where}`: its parameters must be one schema object (parameters or "
            "parametersJsonSchema).",
            param=where,
        )
    for key in ("parameters", "parametersJsonSchema"):
        if key in declaration:
            declaration[key] = {k: v for k, v in declaration[key].items() if k != "$schema"}
    return declaration


def tool_choice(
    config: Any, tools: list[dict[str, Any]]
) -> tuple[str | dict[str, Any] | None, list[dict[str, Any]]]:
    """The chat `tool_choice` a `toolConfig` asks for (None: the member's default), and the
    tools the member is offered (only the allowed ones when `allowedFunctionNames` says)."""
    if config is None:
        return None, tools
    where = "toolConfig.functionCallingConfig"
    if not isinstance(config, dict) or set(camel_keys(config)) - {"functionCallingConfig"}:
        raise BadRequest("`toolConfig` takes functionCallingConfig only.", param="toolConfig")
    calling = camel_keys(config).get("functionCallingConfig")
    if calling is None:
        return None, tools
    if not isinstance(calling, dict) or set(camel_keys(calling)) - {"mode", "allowedFunctionNames"}:
        raise BadRequest(f"`{where}` takes mode and allowedFunctionNames.", param=where)
    calling = camel_keys(calling)
    mode = calling.get("mode", "AUTO")
    if not isinstance(mode, str) or mode.upper() not in _MODES:
        raise BadRequest(f"`{where}.mode` must be one of {', '.join(_MODES)}.", param=where)
    mode = mode.upper()
    allowed = calling.get("allowedFunctionNames")
    if allowed is None:
        return _MODES[mode], tools
    declared = {d["name"] for tool in tools for d in tool["functionDeclarations"]}
    if (
        not isinstance(allowed, list)
        or not allowed
        or not all(isinstance(n, str) and n in declared for n in allowed)
    ):
        raise BadRequest(
            f"`{where}.allowedFunctionNames` must name declared functions.", param=where
        )
    if mode not in ("ANY", "VALIDATED"):
        raise BadRequest(
            f"`{where}.allowedFunctionNames` goes with mode ANY or VALIDATED.", param=where
        )
    if mode == "ANY" and len(allowed) == 1:
        return {"type": "function", "function": {"name": allowed[0]}}, tools
    kept = [d for tool in tools for d in tool["functionDeclarations"] if d["name"] in allowed]
    return _MODES[mode], [{"functionDeclarations": kept}]

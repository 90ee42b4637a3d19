"""Which provider litellm would call for a model: checked when the config is, not per call.

Why: `model: notaprovider/x` passes every check of the file's shape, and litellm refuses it only
when a seat calls it, inside a panel, once per panel. litellm knows its providers, so it is
asked, here, the one package that may use it.

Importing litellm takes seconds, and `check-config` (or a `serve` supervisor) should not pay that
for a config whose providers are plainly known. So the names litellm declares (its
`LlmProviders` enum and its JSON-configured OpenAI-compatible providers) are first read from its
installed files, without importing it: a model written `provider/name` with a known provider
needs no more. Anything else (no prefix, an unknown prefix, a `custom_llm_provider`) goes to
litellm's own `get_llm_provider`, which also knows model names without a prefix (`gpt-4o`) and
OpenAI-compatible hosts by their `api_base`. Unreadable files just send every model that way.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import importlib.util
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gateway.config.located import located, tree
from gateway.config.settings import Config, ConfigError

PROVIDERS_DOC = "https://docs.litellm.ai/docs/providers"


def check_providers(config: Config) -> None:
    """`ConfigError` naming each model whose provider litellm would not know, by its path."""
    # a loaded config kept every model_list entry, in order (a bad or duplicate one fails it)
    entries = enumerate(config.litellm_params.values())
    problems = provider_problems((f"model_list[{i}].litellm_params", p) for i, p in entries)
    if problems and config.path is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):  # (read a moment ago)
            problems = located(problems, tree(config.path.read_text(encoding="utf-8")))
    if problems:
        raise ConfigError(problems)


def provider_problems(models: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """For each (path of a model entry's litellm_params, those params): a problem naming the
    path when litellm would not know which provider to call, with the closest it knows."""
    problems = []
    for path, params in models:
        model = params.get("model")
        if not isinstance(model, str):
            continue  # the file's shape check names it
        if _plainly_known(model, params.get("custom_llm_provider")):
            continue
        refusal = _litellm_refuses(model, params)
        if refusal is not None:
            problems.append(f"{path}.model: {refusal}")
    return problems


def _plainly_known(model: str, custom: object) -> bool:
    known = declared_providers()
    if custom is not None:
        return isinstance(custom, str) and custom in known
    prefix, slash, rest = model.partition("/")
    return bool(slash and rest) and prefix in known


def _litellm_refuses(model: str, params: Mapping[str, Any]) -> str | None:
    """None when litellm can tell the provider, else what is wrong, in the file's words."""
    import litellm

    custom = params.get("custom_llm_provider")
    api_base = params.get("api_base")
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints a banner as it refuses
            litellm.get_llm_provider(
                model=model,
                custom_llm_provider=custom if isinstance(custom, str) else None,
                api_base=api_base if isinstance(api_base, str) else None,
            )
        placed = True
    except (litellm.BadRequestError, ValueError):
        placed = False
    listed = (getattr(name, "value", name) for name in litellm.provider_list)  # (an enum)
    known = sorted({*declared_providers(), *map(str, listed)})
    if placed and not (isinstance(custom, str) and custom not in known):
        return None  # (it takes any custom_llm_provider here, and refuses it at the call)
    if isinstance(custom, str):
        written, what = custom, f"custom_llm_provider {custom!r}"
    elif "/" in model:
        written, what = model.split("/", 1)[0], f"provider {model.split('/', 1)[0]!r}"
    else:
        return (
            f"litellm cannot tell the provider of {model!r}: write it provider/model "
            f"(openai/{model} for an OpenAI-compatible server; providers: {PROVIDERS_DOC})"
        )
    close = difflib.get_close_matches(written, known, n=3, cutoff=0.6)
    if close:
        return f"{what} is not one litellm knows; did you mean {' or '.join(map(repr, close))}?"
    nearest = ", ".join(difflib.get_close_matches(written, known, n=3, cutoff=0.0))
    return f"{what} is not one litellm knows (the closest: {nearest}; all: {PROVIDERS_DOC})"


@functools.cache
def declared_providers() -> frozenset[str]:
    """The provider names the installed litellm declares, read from its files (not imported);
    empty when they cannot be read."""
    spec = importlib.util.find_spec("litellm")
    locations = spec.submodule_search_locations if spec else None
    if not locations:
        return frozenset()
    root = Path(next(iter(locations)))
    names: set[str] = set()
    with contextlib.suppress(OSError, SyntaxError, ValueError, StopIteration):
        tree = ast.parse((root / "types" / "utils.py").read_text(encoding="utf-8"))
        enum = next(
            node
            for node in tree.body
            if isinstance(node, ast.ClassDef) and node.name == "LlmProviders"
        )
        names |= {
            statement.value.value
            for statement in enum.body
            if isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        }
    with contextlib.suppress(OSError, ValueError, AttributeError):
        listed = json.loads((root / "llms" / "openai_like" / "providers.json").read_text("utf-8"))
        names |= {name for name in listed if isinstance(name, str)}
    return frozenset(names)

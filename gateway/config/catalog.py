"""The catalog the config describes: its models (`model_list`), shapes and collections.

An alias is known to the collections once it is written, well formed or not: a bad entry is
named where it is written, not again as unknown by each collection naming it.
"""

from __future__ import annotations

from typing import Any

from gateway.config.connections import Connection, default_connection
from gateway.config.environ import ENV_PREFIX, resolve
from gateway.config.schema import CollectionSpec, ModelEntry, Shape, plain_name
from gateway.config.sections import check, items
from gateway.config.words import where
from routing import DEFAULT_SHAPES, ROUTER_PANEL, Collection, Model
from routing.refusals import did_you_mean


def written_aliases(raw: dict[Any, Any]) -> set[str] | None:
    """Every model_name written, well formed or not (a bad entry is named already, and its
    alias is no less known to the collections); None when there is no list to look in."""
    if not isinstance(raw.get("model_list"), list):
        return None
    names = [e.get("model_name") for e in raw["model_list"] if isinstance(e, dict)]
    return {name for name in names if isinstance(name, str)}


def read_shapes(raw: Any, problems: list[str]) -> dict[str, tuple[str, ...]]:
    shapes = dict(DEFAULT_SHAPES)
    for name, roles in items(raw, "shapes", problems):
        checked = check(Shape, roles, ("shapes", name), problems)
        if checked is not None:
            shapes[name] = tuple(checked)
    return shapes


def read_entries(
    raw: Any,
    env: dict[str, str] | None,
    secrets: list[str],
    problems: list[str],
    unset: dict[int, str] | None = None,
) -> dict[int, ModelEntry]:
    """Each model_list entry, its `os.environ/` references resolved (left as written when *env*
    is None); index -> entry. An `api_key` whose variable is unset is no problem: the model is
    benched while the rest serve (contract §18), and *unset* gets index -> why."""
    out: dict[int, ModelEntry] = {}
    first: dict[str, int] = {}
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(entry, dict) and isinstance(entry.get("litellm_params"), dict):
            params = entry["litellm_params"]
            entry = {**entry, "litellm_params": params.copy()}
            for key, value in params.items():
                loc = ("model_list", i, "litellm_params", key)
                name = _unset_key(key, value, env)
                if name is not None and unset is not None:
                    unset[i] = f"{name} is not set"
                    entry["litellm_params"][key] = ""
                    continue
                entry["litellm_params"][key] = resolve(value, loc, env, secrets, problems)
        checked = check(ModelEntry, entry, ("model_list", i), problems)
        if checked is None:
            continue
        alias = checked.model_name
        if alias in first:
            problems.append(
                f"{where(('model_list', i, 'model_name'))}: duplicate alias {alias!r} "
                f"(first at model_list[{first[alias]}])"
            )
            continue
        first[alias] = i
        api_key = checked.litellm_params.model_dump().get("api_key")
        if isinstance(api_key, str) and api_key:
            secrets.append(api_key)  # a key written inline is still a secret
        out[i] = checked
    return out


def _unset_key(key: str, value: Any, env: dict[str, str] | None) -> str | None:
    """The variable an `api_key: os.environ/NAME` names, when it is unset."""
    if key != "api_key" or env is None or not isinstance(value, str):
        return None
    if not value.startswith(ENV_PREFIX):
        return None
    name = value[len(ENV_PREFIX) :]
    return None if name in env else name


def read_model(
    index: int,
    entry: ModelEntry,
    connections: dict[str, Connection],
    written: set[str],
    problems: list[str],
) -> Model:
    """*written*: every connection name in the file (a malformed one is named where it is)."""
    bench = entry.bench
    connection = bench.connection if bench and bench.connection else None
    if connection and written and connection not in written:
        known = ", ".join(sorted(written))
        problems.append(
            f"{where(('model_list', index, 'bench', 'connection'))}: unknown connection "
            f"{connection!r}{did_you_mean(connection, written, '{!r}')} (connections: {known})"
        )
    connection = connection or default_connection(entry.litellm_params.model_dump())
    spec = connections.get(connection)
    return Model(
        alias=entry.model_name,
        served=entry.litellm_params.model,
        connection=connection,
        role=bench.role if bench else "general",
        family=bench.family if bench else "",
        context_window=bench.context_window if bench else None,
        ad_hoc=bench.ad_hoc if bench else False,
        preferred=bool(spec and spec.preferred),
        vision=bool(bench and bench.vision) or _supports_vision(entry.model_info),
        prefill=_supports_prefill(entry.model_info),
    )


def _supports_vision(model_info: dict[str, Any] | None) -> bool:
    """LiteLLM's own `model_info: {supports_vision: true}`, so its configs paste in seeing."""
    return model_info is not None and model_info.get("supports_vision") is True


def _supports_prefill(model_info: dict[str, Any] | None) -> bool | None:
    """LiteLLM's own `model_info: {supports_assistant_prefill: ...}`; None when it says nothing
    (litellm's model map is asked then)."""
    found = (model_info or {}).get("supports_assistant_prefill")
    return found if isinstance(found, bool) else None


def read_collections(
    raw: Any, aliases: set[Any] | None, shapes: set[str], problems: list[str]
) -> list[Collection]:
    out = []
    above = None
    lowered: dict[str, str] = {}  # a name in lower case -> the name as written first
    for name, value in items(raw, "collections", problems):
        loc: tuple[str | int, ...] = ("collections", name)
        if name in CollectionSpec.model_fields and not isinstance(value, dict):
            under = f"{above}:" if above else "its collection"
            problems.append(
                f"{where(loc)}: a collection's {name}, written one level too far out (where "
                f"collections are named): indent it under {under}"
            )
            continue
        above = name
        if name == ROUTER_PANEL or not plain_name(name):
            what = "reserved for the router's panel" if name == ROUTER_PANEL else "not a plain name"
            problems.append(f"{where(loc)}: the collection name {name!r} is {what}")
            continue
        # names are case-sensitive (as model ids are), so two that differ only in case would
        # be one slip of a client's shift key apart: refused
        twin = lowered.setdefault(str(name).lower(), str(name))
        if twin != name:
            problems.append(
                f"{where(loc)}: the collection name {name!r} differs from {twin!r} only in "
                "case; names are case-sensitive, so rename one"
            )
            continue
        spec: CollectionSpec | None = check(CollectionSpec, value, loc, problems)
        if spec is None:
            continue
        for i, alias in enumerate(spec.members):
            if aliases is not None and alias not in aliases:
                hint = did_you_mean(alias, aliases, "{!r}")
                problems.append(f"{where((*loc, 'members', i))}: unknown alias {alias!r}{hint}")
        if spec.shape is not None and spec.shape not in shapes:
            problems.append(
                f"{where((*loc, 'shape'))}: unknown shape {spec.shape!r}"
                f"{did_you_mean(spec.shape, shapes, '{!r}')} (shapes: {', '.join(sorted(shapes))})"
            )
        if spec.merger is not None and aliases is not None and spec.merger not in aliases:
            hint = did_you_mean(spec.merger, aliases, "{!r}")
            problems.append(
                f"{where((*loc, 'merger'))}: unknown merger alias {spec.merger!r}{hint}"
            )
        out.append(
            Collection(
                name,
                tuple(spec.members),
                spec.description,
                tuple(spec.tags),
                spec.shape,
                spec.reply,
                spec.merger,
            )
        )
    return out

"""The config file, read and validated once at start-up.

Models use LiteLLM's `model_list` shape so an existing proxy config pastes in; the bench's own
facts sit under `bench:`. Secrets are referenced as `os.environ/NAME` and resolved here, never
written back. A bad config fails with every problem named by its path in the file, not just the
first: each item of a section is checked on its own (schema.py), then the references between
sections are checked against every name written, well formed or not. One mistake is one
problem: a connection whose `rpm` is malformed is named once, not again as unknown by each model
on it (a name is known once it is written; what is wrong with it is said where it is written).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import TypeAdapter, ValidationError

from gateway.config.schema import (
    CollectionSpec,
    ConnectionSpec,
    FileSections,
    GatewaySettings,
    ModelEntry,
    Shape,
    plain_name,
)
from gateway.config.words import describe, got, where
from routing import DEFAULT_SHAPES, ROUTER_PANEL, Catalog, Collection, Model, PanelLimits
from routing.refusals import did_you_mean

__all__ = ["Config", "ConfigError", "Connection", "GatewaySettings", "load_config", "parse_config"]

ENV_PREFIX = "os.environ/"
_SHAPE = TypeAdapter(Shape)


class ConfigError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Connection:
    name: str
    rpm: int | None = None
    preferred: bool = False
    cool_together: bool = False
    rpd: int | None = None


@dataclass(frozen=True)
class Config:
    catalog: Catalog
    gateway: GatewaySettings
    litellm_params: dict[str, dict[str, Any]]  # alias -> params handed to litellm, secrets resolved
    model_rpm: dict[str, int]
    connections: dict[str, Connection]
    store: str  # a URL: sqlite:///relative/or/absolute.db, or postgresql://...
    path: Path | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)  # resolved values, kept out of logs
    state: str | None = None  # redis://host:port/db, or None for the gateway's own memory
    model_rpd: dict[str, int] = field(default_factory=dict)
    spill_dir: Path = Path("data/spill")  # gateway.spill_dir, resolved against the config's folder
    # alias -> who reads its answers (auto, litellm, direct): its own upstream_reader, else the
    # gateway's
    readers: dict[str, str] = field(default_factory=dict)

    def reader(self, alias: str) -> str:
        return self.readers.get(alias, self.gateway.upstream_reader)

    @property
    def route_collections(self) -> bool:
        """Some collection answers in route mode by default (`reply: route`)."""
        return any(c.reply == "route" for c in self.catalog.collections)

    def collection_shape(self, name: str) -> str | None:
        collection = self.catalog.collection(name)
        return collection.shape if collection else None


def load_config(
    path: str | os.PathLike[str], env: dict[str, str] | None = None, *, secrets: bool = True
) -> Config:
    """The config at *path*. `secrets=False` leaves `os.environ/` references as written, for
    commands that never call a provider (`keys`): they must work without the providers' keys."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as file:  # (read as a file, so errors name it)
            raw = yaml.safe_load(file)
    except OSError as exc:
        raise ConfigError([f"cannot read config {path}: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError([f"config {path} is not UTF-8 text: {exc.reason}"]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError([f"config {path} is not valid YAML: {yaml_problem(exc)}"]) from exc
    return parse_config(raw, base=path.parent, env=env, path=path, secrets=secrets)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error on one line, by line and column (the file is named by the caller): `line
    3, column 4: expected <block end>, but found '<block mapping start>' (while parsing a block
    collection at line 2, column 3)`."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return " ".join(str(exc).split())
    mark = exc.problem_mark
    text = f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    if exc.context and exc.context_mark is not None:
        started = exc.context_mark
        text += f" ({exc.context} at line {started.line + 1}, column {started.column + 1})"
    return text


def parse_config(
    raw: Any,
    *,
    base: Path,
    env: dict[str, str] | None = None,
    path: Path | None = None,
    secrets: bool = True,
) -> Config:
    env = dict(os.environ) if env is None else env
    if raw is None:
        raise ConfigError(["the config is empty: it needs model_list and collections"])
    problems: list[str] = []
    resolved: list[str] = []
    if isinstance(raw, dict):
        raw = _services(raw, env, resolved, problems)
    top = _check(FileSections, raw, (), problems)
    if not isinstance(raw, dict):
        raise ConfigError(problems)
    gateway = top.gateway if top and top.gateway else GatewaySettings()
    connections = _connections(raw.get("connections"), problems)
    shapes = _shapes(raw.get("shapes"), problems)
    entries = _entries(raw.get("model_list"), env if secrets else None, resolved, problems)
    written_connections = _names(raw.get("connections"))
    models = [_model(i, e, connections, written_connections, problems) for i, e in entries.items()]
    written_shapes = {*shapes, *_names(raw.get("shapes"))}
    collections = _collections(raw.get("collections"), _written(raw), written_shapes, problems)
    if problems or top is None:
        raise ConfigError(problems)
    limits = PanelLimits(gateway.max_calls, gateway.max_explorers, gateway.reserves)
    catalog = Catalog(tuple(models), tuple(collections), tuple(shapes.items()), limits)
    rpm = {e.model_name: e.bench.rpm for e in entries.values() if e.bench and e.bench.rpm}
    rpd = {e.model_name: e.bench.rpd for e in entries.values() if e.bench and e.bench.rpd}
    params = {e.model_name: e.litellm_params.model_dump() for e in entries.values()}
    readers = {e.model_name: e.upstream_reader or gateway.upstream_reader for e in entries.values()}
    return Config(
        catalog,
        gateway,
        params,
        rpm,
        connections,
        _store(top.store, base),
        path,
        tuple(dict.fromkeys(resolved)),
        top.state,
        rpd,
        _local(gateway.spill_dir, base),
        readers,
    )


def _check(model: Any, value: Any, loc: tuple[str | int, ...], problems: list[str]) -> Any:
    """*value* validated as *model* (a pydantic class, or Shape), or None with its problems."""
    try:
        if model is Shape:
            return _SHAPE.validate_python(value)
        return model.model_validate(value)
    except ValidationError as exc:
        problems.extend(describe(exc, model, loc))
        return None


def _items(raw: Any, section: str, problems: list[str]) -> list[tuple[str, Any]]:
    """A mapping section's (name, value) pairs whose names are plain text; the rest named."""
    if not isinstance(raw, dict):
        return []  # the wrong type is already reported by FileSections
    items = []
    for name, value in raw.items():
        if isinstance(name, str) and name:
            items.append((name, value))
        else:
            problems.append(f"{section}: names must be text, got {got(name)}")
    return items


def _written(raw: dict[Any, Any]) -> set[str] | None:
    """Every model_name written, well formed or not (a bad entry is named already, and its
    alias is no less known to the collections); None when there is no list to look in."""
    if not isinstance(raw.get("model_list"), list):
        return None
    names = [e.get("model_name") for e in raw["model_list"] if isinstance(e, dict)]
    return {name for name in names if isinstance(name, str)}


def _names(raw: Any) -> set[str]:
    """The names a mapping section writes, whatever their values."""
    return {name for name in raw if isinstance(name, str)} if isinstance(raw, dict) else set()


def _list(raw: Any) -> list[Any]:
    return raw if isinstance(raw, list) else []


def _store(url: str, base: Path) -> str:
    prefix = "sqlite:///"
    if url.startswith(prefix):
        return prefix + str(_local(url[len(prefix) :], base))
    return url


def _local(path: str, base: Path) -> Path:
    """A path from the config: relative paths are relative to the config file's folder."""
    file = Path(path)
    return file if file.is_absolute() else (base / file).resolve()


def _connections(raw: Any, problems: list[str]) -> dict[str, Connection]:
    out = {}
    for name, value in _items(raw, "connections", problems):
        spec = _check(
            ConnectionSpec, {} if value is None else value, ("connections", name), problems
        )
        if spec is not None:
            out[name] = Connection(name, spec.rpm, spec.preferred, spec.cool_together, spec.rpd)
    return out


def _shapes(raw: Any, problems: list[str]) -> dict[str, tuple[str, ...]]:
    shapes = dict(DEFAULT_SHAPES)
    for name, roles in _items(raw, "shapes", problems):
        checked = _check(Shape, roles, ("shapes", name), problems)
        if checked is not None:
            shapes[name] = tuple(checked)
    return shapes


def _entries(
    raw: Any, env: dict[str, str] | None, secrets: list[str], problems: list[str]
) -> dict[int, ModelEntry]:
    """Each model_list entry, its `os.environ/` references resolved (left as written when *env*
    is None); index -> entry."""
    out: dict[int, ModelEntry] = {}
    first: dict[str, int] = {}
    for i, entry in enumerate(_list(raw)):
        if isinstance(entry, dict) and isinstance(entry.get("litellm_params"), dict):
            params = entry["litellm_params"]
            entry = {**entry, "litellm_params": params.copy()}
            for key, value in params.items():
                loc = ("model_list", i, "litellm_params", key)
                entry["litellm_params"][key] = _resolve(value, loc, env, secrets, problems)
        checked = _check(ModelEntry, entry, ("model_list", i), problems)
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
        if isinstance(api_key, str):
            secrets.append(api_key)  # a key written inline is still a secret
        out[i] = checked
    return out


def _services(
    raw: dict[str, Any], env: dict[str, str], secrets: list[str], problems: list[str]
) -> dict[str, Any]:
    """*raw* with `store:` and `state:` read from the environment when they say `os.environ/NAME`,
    so a URL with a password need not be written in the file. Resolved even for commands that
    leave provider keys alone (`keys` needs the store); the URL's password is kept out of logs."""
    out = dict(raw)
    for section in ("store", "state"):
        written = out.get(section)
        if not (isinstance(written, str) and written.startswith(ENV_PREFIX)):
            continue
        found = len(problems)
        value = _resolve(written, (section,), env, [], problems)
        if len(problems) > found:
            del out[section]  # named once, as unset; not again as a malformed URL
            continue
        password = urlsplit(value).password
        secrets.extend([password] if password else [])
        out[section] = value
    return out


def _resolve(
    value: Any,
    loc: tuple[str | int, ...],
    env: dict[str, str] | None,
    secrets: list[str],
    problems: list[str],
) -> Any:
    if env is not None and isinstance(value, str) and value.startswith(ENV_PREFIX):
        name = value[len(ENV_PREFIX) :]
        if name not in env:
            problems.append(f"{where(loc)}: references {value}, but {name} is not set")
            return value  # left as written, so the entry's other checks still run
        secrets.append(env[name])
        return env[name]
    return value


def _model(
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
    connection = connection or _default_connection(entry.litellm_params.model_dump())
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


def _default_connection(params: dict[str, Any]) -> str:
    base = params.get("api_base")
    if isinstance(base, str) and base:
        try:
            parts = urlsplit(base)
            if parts.hostname:
                port = parts.port or (443 if parts.scheme == "https" else 80)
                return f"{parts.hostname}:{port}"
        except ValueError:
            pass  # an api_base litellm cannot use either: it fails at the call, named there
    return str(params["model"]).split("/", 1)[0]


def _collections(
    raw: Any, aliases: set[Any] | None, shapes: set[str], problems: list[str]
) -> list[Collection]:
    out = []
    for name, value in _items(raw, "collections", problems):
        loc: tuple[str | int, ...] = ("collections", name)
        if name == ROUTER_PANEL or not plain_name(name):
            what = "reserved for the router's panel" if name == ROUTER_PANEL else "not a plain name"
            problems.append(f"{where(loc)}: the collection name {name!r} is {what}")
            continue
        spec: CollectionSpec | None = _check(CollectionSpec, value, loc, problems)
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

"""The config file, read and validated once at start-up.

Models use LiteLLM's `model_list` shape so an existing proxy config pastes in; the bench's own
facts sit under `bench:`. Secrets are referenced as `os.environ/NAME` and resolved here
(environ.py), never written back. A bad config fails with every problem named by its path in the
file, not just the first: each item of a section is checked on its own (sections.py), then the
references between sections are checked against every name written, well formed or not
(catalog.py). One mistake is one problem: a connection whose `rpm` is malformed is named once,
not again as unknown by each model on it (a name is known once it is written; what is wrong with
it is said where it is written).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from gateway.config.catalog import (
    read_collections,
    read_entries,
    read_model,
    read_shapes,
    written_aliases,
)
from gateway.config.connections import Connection, read_connections
from gateway.config.environ import resolve_services
from gateway.config.located import located, tree, written_twice
from gateway.config.pasted import as_pasted
from gateway.config.schema import (
    FileSections,
    GatewaySettings,
    LifecycleSettings,
    SuiteSettings,
)
from gateway.config.sections import check, names
from gateway.config.slips import shell_advice, shell_in_line
from routing import Catalog, PanelLimits

__all__ = [
    "Config",
    "ConfigError",
    "Connection",
    "GatewaySettings",
    "LifecycleSettings",
    "SuiteSettings",
    "load_config",
    "parse_config",
]


class ConfigError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


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
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    # alias -> why it cannot be called (its key's variable unset): benched at start, not refused
    unready: dict[str, str] = field(default_factory=dict)
    suite: SuiteSettings = field(default_factory=SuiteSettings)
    suite_dir: Path | None = None  # suite.dir, resolved against the config's folder
    # what was read other than as written (a pasted LiteLLM config's sections, rpm, tpm), and
    # what is accepted but unwise (a key written into the file): shown by check-config and serve
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def reader(self, alias: str) -> str:
        return self.readers.get(alias, self.gateway.upstream_reader)

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
            text = file.read()
        raw = yaml.safe_load(text)
    except OSError as exc:
        raise ConfigError([f"cannot read config {path}: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError([f"config {path} is not UTF-8 text: {exc.reason}"]) from exc
    except yaml.YAMLError as exc:
        problem = yaml_problem(exc, text)
        raise ConfigError([f"config {path} is not valid YAML: {problem}"]) from exc
    # Problems are named by the model and the line they are on, which only the file knows.
    nodes = tree(text)
    twice = written_twice(nodes)
    try:
        config = parse_config(raw, base=path.parent, env=env, path=path, secrets=secrets)
    except ConfigError as exc:
        raise ConfigError(twice + located(exc.problems, nodes)) from None
    if twice:
        raise ConfigError(twice)
    return replace(
        config,
        notes=tuple(located(list(config.notes), nodes)),
        warnings=tuple(located(list(config.warnings), nodes)),
    )


def yaml_problem(exc: yaml.YAMLError, source: str = "") -> str:
    """PyYAML's error on one line, by line and column (the file is named by the caller): `line
    3, column 4: expected <block end>, but found '<block mapping start>' (while parsing a block
    collection at line 2, column 3)`. A `${NAME}` on that line (which YAML's flow style reads as
    a mapping) is named for what it is."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return " ".join(str(exc).split())
    mark = exc.problem_mark
    lines = source.splitlines()
    for number in dict.fromkeys((mark.line, exc.context_mark.line if exc.context_mark else -1)):
        shell = shell_in_line(lines[number]) if 0 <= number < len(lines) else None
        if shell is not None:
            return f"line {number + 1}: {shell_advice('${' + shell + '}', shell)}"
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
    notes: list[str] = []
    warnings: list[str] = []
    if isinstance(raw, dict):
        raw = as_pasted(raw, notes, warnings, problems)
        raw = resolve_services(raw, env, resolved, problems)
    top = check(FileSections, raw, (), problems)
    if not isinstance(raw, dict):
        raise ConfigError(problems)
    gateway = top.gateway if top and top.gateway else GatewaySettings()
    connections = read_connections(raw.get("connections"), problems)
    shapes = read_shapes(raw.get("shapes"), problems)
    unset: dict[int, str] = {}
    entries = read_entries(
        raw.get("model_list"), env if secrets else None, resolved, problems, unset
    )
    written_connections = names(raw.get("connections"))
    models = [
        read_model(i, e, connections, written_connections, problems) for i, e in entries.items()
    ]
    written_shapes = {*shapes, *names(raw.get("shapes"))}
    aliases = written_aliases(raw)
    collections = read_collections(raw.get("collections"), aliases, written_shapes, problems)
    if problems or top is None:
        raise ConfigError(problems)
    suite = top.suite or SuiteSettings()
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
        top.lifecycle or LifecycleSettings(),
        {entries[i].model_name: why for i, why in unset.items() if i in entries},
        suite,
        _local(suite.dir, base) if suite.dir else None,
        tuple(notes),
        tuple(warnings),
    )


def _store(url: str, base: Path) -> str:
    prefix = "sqlite:///"
    if url.startswith(prefix):
        return prefix + str(_local(url[len(prefix) :], base))
    return url


def _local(path: str, base: Path) -> Path:
    """A path from the config: relative paths are relative to the config file's folder."""
    file = Path(path)
    return file if file.is_absolute() else (base / file).resolve()

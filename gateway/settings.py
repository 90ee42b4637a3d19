"""The config file, read and validated once at start-up.

Models use LiteLLM's `model_list` shape so an existing proxy config pastes in; the bench's own
facts sit under `bench:`. Secrets are referenced as `os.environ/NAME` and resolved here, never
written back. A bad config fails with every problem named, not just the first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from routing import DEFAULT_SHAPES, ROLES, ROUTER_PANEL, Catalog, Collection, Limits, Model

ENV_PREFIX = "os.environ/"
_TAG = re.compile(r"^[a-z][a-z0-9-]*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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


@dataclass(frozen=True)
class GatewaySettings:
    max_calls: int = 5
    max_explorers: int = 2
    reserves: int = 2
    seat_timeout_s: float = 300.0
    require_keys: bool = False
    cooldown_default_s: float = 60.0
    cooldown_max_s: float = 3600.0
    max_body_bytes: int = 20_000_000
    keepalive_s: float = 10.0
    drain_timeout_s: float = 30.0  # on SIGTERM: how long running panels may take to finish
    # Stream each seat's upstream call? Streaming gives first-token times and catches cut
    # streams, but costs litellm ~2.5x the CPU per call: "auto" streams only for streamed panels.
    stream_seats: str = "auto"  # auto | always | never
    # Who may reach the gateway from a browser (contract §14): Host names beside loopback, web
    # origins allowed to call it, and the URL it is published at behind a proxy.
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    public_url: str | None = None


@dataclass(frozen=True)
class Config:
    catalog: Catalog
    gateway: GatewaySettings
    litellm_params: dict[str, dict[str, Any]]  # alias -> params handed to litellm, secrets resolved
    model_rpm: dict[str, int]
    connections: dict[str, Connection]
    store: str  # a URL: sqlite:///relative/or/absolute.db
    path: Path | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)  # resolved values, kept out of logs

    def collection_shape(self, name: str) -> str | None:
        collection = self.catalog.collection(name)
        return collection.shape if collection else None


def load_config(path: str | os.PathLike[str], env: dict[str, str] | None = None) -> Config:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError([f"cannot read config {path}: {exc.strerror}"]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError([f"config {path} is not valid YAML: {exc}"]) from exc
    return parse_config(raw, base=path.parent, env=env, path=path)


def parse_config(
    raw: Any, *, base: Path, env: dict[str, str] | None = None, path: Path | None = None
) -> Config:
    env = dict(os.environ) if env is None else env
    problems: list[str] = []
    if not isinstance(raw, dict):
        raise ConfigError(["config must be a mapping with model_list and collections"])
    gateway = _gateway(raw.get("gateway") or {}, problems)
    connections = _connections(raw.get("connections") or {}, problems)
    shapes = _shapes(raw.get("shapes"), problems)
    secrets: list[str] = []
    models, params, rpm = _models(raw.get("model_list"), connections, env, secrets, problems)
    collections = _collections(raw.get("collections") or {}, models, shapes, problems)
    if problems:
        raise ConfigError(problems)
    limits = Limits(gateway.max_calls, gateway.max_explorers, gateway.reserves)
    catalog = Catalog(tuple(models), tuple(collections), tuple(shapes.items()), limits)
    store = _store(raw.get("store", "sqlite:///data/records.db"), base)
    return Config(
        catalog, gateway, params, rpm, connections, store, path, tuple(dict.fromkeys(secrets))
    )


def _store(url: str, base: Path) -> str:
    prefix = "sqlite:///"
    if isinstance(url, str) and url.startswith(prefix):
        file = Path(url[len(prefix) :])
        return prefix + str(file if file.is_absolute() else (base / file).resolve())
    return str(url)


def _gateway(raw: Any, problems: list[str]) -> GatewaySettings:
    if not isinstance(raw, dict):
        problems.append("gateway must be a mapping")
        return GatewaySettings()
    defaults = GatewaySettings()
    bounds = {"max_calls": (1, 10), "max_explorers": (0, 2), "reserves": (0, 5)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if not hasattr(defaults, key):
            problems.append(f"gateway.{key} is not a known setting")
            continue
        if key in ("allowed_hosts", "allowed_origins", "public_url"):
            _web_setting(key, value, values, problems)
            continue
        expected = type(getattr(defaults, key))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not expected:
            problems.append(f"gateway.{key} must be {expected.__name__}, got {value!r}")
            continue
        if key == "stream_seats" and value not in ("auto", "always", "never"):
            problems.append(f"gateway.stream_seats must be auto, always or never, got {value!r}")
            continue
        low, high = bounds.get(key, (0, None))
        if expected in (int, float) and (value < low or (high is not None and value > high)):
            problems.append(f"gateway.{key} must be between {low} and {high}, got {value}")
            continue
        values[key] = value
    return GatewaySettings(**values)


def _web_setting(key: str, value: Any, values: dict[str, Any], problems: list[str]) -> None:
    if key == "public_url":
        parts = urlsplit(value) if isinstance(value, str) else None
        if value is not None and (
            parts is None or parts.scheme not in ("http", "https") or not parts.hostname
        ):
            problems.append(f"gateway.public_url must be an http(s) URL, got {value!r}")
            return
        values[key] = value
    elif isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        values[key] = tuple(v.strip() for v in value)
    else:
        problems.append(f"gateway.{key} must be a list of names, got {value!r}")


def _connections(raw: Any, problems: list[str]) -> dict[str, Connection]:
    if not isinstance(raw, dict):
        problems.append("connections must be a mapping of name -> {rpm, preferred, cool_together}")
        return {}
    out = {}
    for name, spec in raw.items():
        spec = spec or {}
        unknown = set(spec) - {"rpm", "preferred", "cool_together"}
        if unknown:
            problems.append(f"connections.{name}: unknown keys {', '.join(sorted(unknown))}")
        rpm = spec.get("rpm")
        if rpm is not None and (type(rpm) is not int or rpm < 1):
            problems.append(f"connections.{name}.rpm must be a positive integer")
            rpm = None
        out[str(name)] = Connection(
            str(name), rpm, bool(spec.get("preferred")), bool(spec.get("cool_together"))
        )
    return out


def _shapes(raw: Any, problems: list[str]) -> dict[str, tuple[str, ...]]:
    shapes = dict(DEFAULT_SHAPES)
    if raw is None:
        return shapes
    if not isinstance(raw, dict):
        problems.append("shapes must be a mapping of shape -> [roles]")
        return shapes
    for name, roles in raw.items():
        if not isinstance(roles, list) or not roles:
            problems.append(f"shapes.{name} must be a non-empty list of roles")
            continue
        bad = [r for r in roles if r not in ROLES]
        if bad:
            problems.append(f"shapes.{name}: unknown role(s) {', '.join(map(str, bad))}")
            continue
        shapes[str(name)] = tuple(roles)
    return shapes


def _resolve(value: Any, where: str, env: dict[str, str], secrets: list[str], problems: list[str]):
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        name = value[len(ENV_PREFIX) :]
        if name not in env:
            problems.append(f"{where} references {value}, but {name} is not set")
            return None
        secrets.append(env[name])
        return env[name]
    return value


def _models(raw, connections, env, secrets, problems):
    models: list[Model] = []
    params: dict[str, dict[str, Any]] = {}
    rpm: dict[str, int] = {}
    if not isinstance(raw, list) or not raw:
        problems.append("model_list must be a non-empty list")
        return models, params, rpm
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("litellm_params"), dict):
            problems.append(f"model_list[{i}] needs model_name and litellm_params")
            continue
        alias = entry.get("model_name")
        if not isinstance(alias, str) or not _NAME.match(alias):
            problems.append(f"model_list[{i}].model_name must be a plain name, got {alias!r}")
            continue
        if alias in params:
            problems.append(f"duplicate alias {alias!r} in model_list")
            continue
        lp = {
            k: _resolve(v, f"{alias}.{k}", env, secrets, problems)
            for k, v in entry["litellm_params"].items()
        }
        if isinstance(lp.get("api_key"), str):
            secrets.append(lp["api_key"])  # a key written inline is still a secret
        if not isinstance(lp.get("model"), str):
            problems.append(f"{alias}: litellm_params.model is required")
            continue
        bench = entry.get("bench") or {}
        model = _bench_model(alias, lp, bench, connections, problems)
        if model is None:
            continue
        if bench.get("rpm") is not None:
            if type(bench["rpm"]) is not int or bench["rpm"] < 1:
                problems.append(f"{alias}: bench.rpm must be a positive integer")
            else:
                rpm[alias] = bench["rpm"]
        models.append(model)
        params[alias] = lp
    return models, params, rpm


def _bench_model(alias, lp, bench, connections, problems) -> Model | None:
    known = {"connection", "role", "family", "context_window", "ad_hoc", "rpm"}
    unknown = set(bench) - known
    if unknown:
        problems.append(f"{alias}: unknown bench keys {', '.join(sorted(unknown))}")
    connection = bench.get("connection") or _default_connection(lp)
    if connections and bench.get("connection") and connection not in connections:
        problems.append(f"{alias}: unknown connection {connection!r}")
    role = bench.get("role", "general")
    if role not in ROLES:
        problems.append(f"{alias}: role {role!r} is not one of {', '.join(ROLES)}")
        return None
    window = bench.get("context_window")
    if window is not None and (type(window) is not int or window < 1):
        problems.append(f"{alias}: context_window must be a positive integer")
        window = None
    spec = connections.get(connection)
    return Model(
        alias=alias,
        served=lp["model"],
        connection=connection,
        role=role,
        family=str(bench.get("family") or ""),
        context_window=window,
        ad_hoc=bool(bench.get("ad_hoc", False)),
        preferred=bool(spec and spec.preferred),
    )


def _default_connection(lp: dict[str, Any]) -> str:
    base = lp.get("api_base")
    if isinstance(base, str) and base:
        parts = urlsplit(base)
        if parts.hostname:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            return f"{parts.hostname}:{port}"
    return lp["model"].split("/", 1)[0]


def _collections(raw, models, shapes, problems) -> list[Collection]:
    if not isinstance(raw, dict) or not raw:
        problems.append("collections must be a non-empty mapping of name -> {members, ...}")
        return []
    aliases = {m.alias for m in models}
    out = []
    for name, spec in raw.items():
        name = str(name)
        if name == ROUTER_PANEL or not _NAME.match(name):
            problems.append(f"collection name {name!r} is reserved or not a plain name")
            continue
        spec = spec or {}
        unknown = set(spec) - {"members", "description", "tags", "shape", "reply", "merger"}
        if unknown:
            problems.append(f"collections.{name}: unknown keys {', '.join(sorted(unknown))}")
        members = spec.get("members") or []
        if not isinstance(members, list):
            problems.append(f"collections.{name}.members must be a list of aliases")
            members = []
        for alias in members:
            if alias not in aliases:
                problems.append(f"collections.{name}: unknown alias {alias!r}")
        if len(set(members)) != len(members):
            problems.append(f"collections.{name}: a member is listed twice")
        description = str(spec.get("description") or "")
        if len(description) > 300:
            problems.append(f"collections.{name}.description is over 300 characters")
        tags = spec.get("tags") or []
        if (
            not isinstance(tags, list)
            or len(tags) > 8
            or not all(isinstance(t, str) and _TAG.match(t) for t in tags)
        ):
            problems.append(f"collections.{name}.tags must be at most 8 lower-case words")
            tags = []
        shape = spec.get("shape")
        if shape is not None and shape not in shapes:
            problems.append(f"collections.{name}: unknown shape {shape!r}")
        reply = spec.get("reply", "panel")
        if reply not in ("panel", "merged"):
            problems.append(f"collections.{name}.reply must be panel or merged, got {reply!r}")
        merger = spec.get("merger")
        if merger is not None and merger not in aliases:
            problems.append(f"collections.{name}: unknown merger alias {merger!r}")
        out.append(Collection(name, tuple(members), description, tuple(tags), shape, reply, merger))
    return out

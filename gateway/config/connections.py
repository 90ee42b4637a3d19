"""A connection: what several models share upstream (an account, a host), and so its limits.

A model names its connection under `bench:`; one that does not is on the host of its
`api_base`, else on its provider (`openai/gpt-4o` is on `openai`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from gateway.config.schema import ConnectionSpec
from gateway.config.sections import check, items


@dataclass(frozen=True)
class Connection:
    name: str
    rpm: int | None = None
    preferred: bool = False
    cool_together: bool = False
    rpd: int | None = None
    listing: bool | str | None = None  # its provider's listing: upstream/listing_sources.py


def read_connections(raw: Any, problems: list[str]) -> dict[str, Connection]:
    out = {}
    for name, value in items(raw, "connections", problems):
        spec = check(
            ConnectionSpec, {} if value is None else value, ("connections", name), problems
        )
        if spec is not None:
            out[name] = Connection(
                name, spec.rpm, spec.preferred, spec.cool_together, spec.rpd, spec.listing
            )
    return out


def default_connection(params: dict[str, Any]) -> str:
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

"""Ollama's API (`/api/chat`, `/api/generate`, `/api/tags`, `/api/show`, `/api/version`), so
Open WebUI and every Ollama client can ask a panel.

litellm has no inbound Ollama translator, and the format is small. It is two modules, one per
half, so that neither passes ~250 lines: ollama_request.py is the read half (a body checked and
turned into OpenAI chat messages and sampling, refusing what cannot be honoured; pure, for the
body reader's child process); this module is the rest, the `Format` itself and everything the
gateway sends back: replies, the stream, errors, and the collections listed as models.
Replies are built with the `ollama` package's own types, so they are the shapes its client
parses. Streams are NDJSON (Ollama streams unless `"stream": false`): a line for the header,
one per seat section in finish order, then the `done` line carrying `bench`. Keep-alives are
lines with empty content (an Ollama client parses every line as JSON). A tool-calling turn is
route mode's (route_ollama.py); a panel answers in prose.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ollama import ListResponse, ShowResponse
from ollama._types import ModelDetails  # (not re-exported at the top level)
from starlette.responses import Response

from gateway.errors import GatewayError
from gateway.replies import JSONResponse

if TYPE_CHECKING:  # route mode brings litellm, which the body reader's child must not import
    pass

NDJSON = "application/x-ndjson"


# -- read ---------------------------------------------------------------------------------------


# -- render -------------------------------------------------------------------------------------


def render_error(error: GatewayError) -> Response:
    """Ollama's `{"error": "..."}`, with the gateway's status; a failed panel keeps `bench`."""
    return JSONResponse(
        {"error": error.message, **error.extra}, status_code=error.status, headers=error.headers
    )


def tags_body(entries: list[dict[str, Any]]) -> bytes:
    """`/api/tags`: the collections /v1/models lists, as Ollama lists its models."""
    models = [ListResponse.Model(**_listed(entry)) for entry in entries]
    listing = ListResponse(models=models).model_dump(mode="json", exclude_none=True)
    for model, entry in zip(listing["models"], entries, strict=True):
        model["name"] = entry["id"]  # Ollama's own listing names each model twice
    return json.dumps(listing).encode()


def show_body(entry: dict[str, Any]) -> bytes:
    """`/api/show`: one collection's details."""
    info = {
        "general.architecture": "bench",
        "general.description": entry["description"],
        "bench.members": entry["members"],
        "bench.explorers": entry["explorers"],
        "bench.shape": entry["shape"],
        "bench.reply": entry["reply"],
        "bench.tags": entry["tags"],
    }
    shown = ShowResponse(
        modified_at=_EPOCH,
        details=_details(entry),
        model_info=info,
        capabilities=["completion"],
    )
    return shown.model_dump_json(by_alias=True, exclude_none=True).encode()


def _listed(entry: dict[str, Any]) -> dict[str, Any]:
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()
    return {
        "model": entry["id"],
        "modified_at": _EPOCH,
        "digest": digest,
        "size": 0,
        "details": _details(entry),
    }


def _details(entry: dict[str, Any]) -> ModelDetails:
    return ModelDetails(format="bench", family="bench", families=list(entry["members"]) or None)


_EPOCH = datetime.fromtimestamp(0, UTC)


def iso(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat().replace("+00:00", "Z")


def ndjson(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode() + b"\n"

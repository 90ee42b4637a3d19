"""The collections as models: /v1/models lists what a key may use, and the Ollama and Gemini
listings show the same entries in their own shapes."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.endpoints.common import runtime_of
from gateway.errors import NotFound
from gateway.replies import JSONResponse
from gateway.request.checks import COLLECTION_PREFIX, MERGED
from gateway.request.client import Client
from routing import ROUTER_PANEL
from routing.refusals import did_you_mean, echo


async def list_models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": await _listed(request)})


async def _listed(request: Request) -> list[dict[str, Any]]:
    """Every collection the caller's key may use as a model, as /v1/models lists them."""
    client = await runtime_of(request).keys.client(request)
    return listed(request, client)


def listed(request: Request, client: Client) -> list[dict[str, Any]]:
    """The collections a client may use, as /v1/models lists them (each also `:merged`); the
    Ollama and Gemini listings show the same entries in their own shapes."""
    catalog = runtime_of(request).config.catalog
    limits = catalog.limits
    data: list[dict[str, Any]] = []
    for c in catalog.collections:
        data.append(
            {
                "id": COLLECTION_PREFIX + c.name,
                "object": "model",
                "created": 0,
                "owned_by": "bench",
                "description": c.description,
                "tags": list(c.tags),
                "members": list(c.members),
                "explorers": min(limits.max_explorers, max(0, limits.max_calls - len(c.members))),
                "shape": c.shape or "general",
                "reply": c.reply,
            }
        )
    data.append(
        {
            "id": COLLECTION_PREFIX + ROUTER_PANEL,
            "object": "model",
            "created": 0,
            "owned_by": "bench",
            "description": "the router's panel: primary, second opinion, explorers",
            "tags": [],
            "members": [],
            "explorers": limits.max_explorers,
            "shape": "general",
            "reply": "panel",
        }
    )
    data = [entry for entry in data if client.may_use(entry["id"].removeprefix(COLLECTION_PREFIX))]
    merged = [{**entry, "id": entry["id"] + MERGED, "reply": "merged"} for entry in data]
    return data + merged


async def get_model(request: Request) -> Response:
    """One name /v1/models lists (`bench/<c>`, or the bare `<c>`, `:merged` or not); any other
    name, or one outside the key's collections, is a 404 as if it did not exist."""
    wanted = request.path_params["model"]
    listed = await _listed(request)
    for entry in listed:
        if wanted in (entry["id"], entry["id"].removeprefix(COLLECTION_PREFIX)):
            return JSONResponse(entry)
    ids = [entry["id"] for entry in listed]  # (only what this key may use: nothing leaks)
    bare = wanted.startswith(COLLECTION_PREFIX)
    hint = did_you_mean(wanted, ids if bare else [i.removeprefix(COLLECTION_PREFIX) for i in ids])
    raise NotFound(
        f"Unknown model {echo(wanted, 200)!r}{hint or ';'} GET /v1/models lists them.",
        param="model",
    )

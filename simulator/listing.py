"""The simulated provider's listing of its models (`GET /v1/models`), as OpenRouter states one.

Why: the gateway reads each provider's listing (which models it serves, free or not, until
when), and the demo and the tests must show a model listed, free, expiring and missing offline.
Every model with a behaviour of its own is listed (not the ``"*"`` fallback); its ``listing``
behaviour key says more:

- ``listing: false``: served, but missing from the listing;
- ``listing: {free: true, expires: "2026-12-01" | expires_in_days: 3, context_length: 131072,
  tools: true, canonical_slug: "...", id: "listed-as"}``: the entry states these, as OpenRouter's
  do (`pricing`, `expiration_date`, `context_length`, `supported_parameters`).

``POST /_sim/listing`` replaces the whole reply, to show a listing that fails: ``{"status":
503}``, ``{"body": "not json"}``, ``{"latency_s": 30}`` (the reply waits), ``{"bytes": N}`` (a
listing of N bytes, sent piece by piece, no length stated); ``{}`` puts the listing back.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from simulator.errors import error_body

_KEYS: dict[str, type | tuple[type, ...]] = {
    "free": bool, "expires": str, "expires_in_days": int, "context_length": int, "tools": bool,
    "canonical_slug": str, "id": str,
}  # fmt: skip
_FAULTS: dict[str, type | tuple[type, ...]] = {
    "status": int, "body": str, "latency_s": (int, float), "bytes": int,
}  # fmt: skip
PAID = {"prompt": "0.0000002", "completion": "0.0000006"}


def check(listing: Any) -> None:
    """ValueError naming the first key of a `listing` behaviour that is unknown or mistyped."""
    if isinstance(listing, bool):
        return
    for key, value in listing.items():
        kind = _KEYS.get(key)
        if kind is None or not isinstance(value, kind) or (kind is int and value is True):
            raise ValueError(
                f"simulator listing key {key!r} is unknown or mistyped ({', '.join(_KEYS)})"
            )
    if "expires" in listing:
        datetime.date.fromisoformat(listing["expires"])  # (ValueError names a bad date)


def entry(model: str, listing: dict[str, Any] | bool | None) -> dict[str, Any] | None:
    """*model*'s entry in the listing, or None when it is missing from it."""
    if listing is False:
        return None
    stated = listing if isinstance(listing, dict) else {}
    found: dict[str, Any] = {
        "id": stated.get("id", model),
        "object": "model",
        "created": 0,
        "owned_by": "bench-gateway-sim",
    }
    if "canonical_slug" in stated:
        found["canonical_slug"] = stated["canonical_slug"]
    if "context_length" in stated:
        found["context_length"] = stated["context_length"]
    if "free" in stated:
        found["pricing"] = {"prompt": "0", "completion": "0"} if stated["free"] else dict(PAID)
    expires = stated.get("expires")
    if "expires_in_days" in stated:
        today = datetime.datetime.now(datetime.UTC).date()
        expires = (today + datetime.timedelta(days=stated["expires_in_days"])).isoformat()
    if expires is not None:
        found["expiration_date"] = expires
    if "tools" in stated:
        found["supported_parameters"] = ["temperature", "max_tokens"] + (
            ["tools", "tool_choice"] if stated["tools"] else []
        )
    return found


async def models(request: Request) -> Response:
    """`GET /v1/models`: every model with a behaviour of its own, as its `listing` says."""
    fault = getattr(request.app.state, "listing_fault", None)
    if fault:
        return await _faulty(fault)
    behaviours = request.app.state.sim.behaviours
    data = [entry(m, b.get("listing")) for m, b in behaviours.items() if m != "*"]
    return JSONResponse({"object": "list", "data": [e for e in data if e is not None]})


async def set_fault(request: Request) -> JSONResponse:
    """`POST /_sim/listing`: the listing's whole reply replaced (``{}``: back to the listing)."""
    try:
        fault = await request.json()
        for key, value in fault.items():
            if key not in _FAULTS or not isinstance(value, _FAULTS[key]):
                raise ValueError(f"unknown or mistyped key {key!r} ({', '.join(_FAULTS)})")
    except (ValueError, AttributeError) as exc:
        return JSONResponse(error_body(400, f"bad listing fault: {exc}"), 400)
    request.app.state.listing_fault = fault or None
    return JSONResponse({"listing_fault": fault or None})


async def _faulty(fault: dict[str, Any]) -> Response:
    await asyncio.sleep(fault.get("latency_s", 0))
    if "bytes" in fault:
        return StreamingResponse(_flood(fault["bytes"]), media_type="application/json")
    status = fault.get("status", 200)
    if "body" in fault:
        return Response(fault["body"], status, media_type="application/json")
    return JSONResponse(error_body(status, "the listing failed"), status)


async def _flood(size: int) -> AsyncIterator[bytes]:
    """A well-formed listing of about *size* bytes, made as it is sent."""
    item = b'{"id": "filler", "object": "model", "created": 0, "owned_by": "sim"},'
    yield b'{"object": "list", "data": ['
    sent, piece = 0, item * max(1, 65536 // len(item))
    while sent < size:
        yield piece
        sent += len(piece)
    yield item[:-1] + b"]}"

"""A provider's own listing of its models (`GET {api_base}/models`, contract §19), read bounded.

Why bounded: the listing is read in the background of a serving gateway, from a host that may be
down, slow, or not the provider at all. The read has one deadline for the whole of it, a byte cap
held as the body arrives, no redirect followed and no encoded body inflated (as an answer's read,
gateway/upstream/capped.py); whatever goes wrong is one `ListingFailed` naming why, and the
caller changes nothing on it.

What is kept of an entry is only what the provider states (OpenRouter states the most): `id`,
`canonical_slug`, `context_length`, free (`pricing.prompt` and `pricing.completion` both "0"),
`expiration_date` and whether `supported_parameters` names `tools`. A field that is missing or
of the wrong type is unknown (None), never guessed; an entry without a string `id`, or a body
that is not a list of entries, makes the whole listing malformed.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

TIMEOUT_S = 15.0  # the whole read, from connecting to the last byte
MAX_BYTES = 16_000_000  # OpenRouter's listing of ~400 models is ~1.5 MB
_PIECE = 65536


class ListingFailed(Exception):
    """The listing could not be read or understood: why, in a sentence."""


@dataclass(frozen=True)
class Entry:
    """One model as the provider's listing states it; None where it states nothing."""

    id: str
    canonical_slug: str | None = None
    context_length: int | None = None
    free: bool | None = None
    expires: str | None = None  # the stated expiration date, YYYY-MM-DD
    tools: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "canonical_slug": self.canonical_slug,
            "context_length": self.context_length,
            "free": self.free,
            "expires": self.expires,
            "tools": self.tools,
        }


async def read_listing(
    url: str, key: str | None, *, timeout_s: float = TIMEOUT_S, max_bytes: int = MAX_BYTES
) -> list[Entry]:
    """The entries *url* lists, read with *key* as a bearer token; `ListingFailed` otherwise."""
    headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        async with asyncio.timeout(timeout_s):
            body = await _fetch(url, headers, max_bytes)
    except TimeoutError:
        raise ListingFailed(f"no complete listing within {timeout_s:.0f} s") from None
    except aiohttp.ClientError as exc:
        raise ListingFailed(f"could not be reached: {_said(exc)}") from None
    except (ValueError, OSError) as exc:  # a URL aiohttp cannot use, a socket refused
        raise ListingFailed(f"could not be reached: {_said(exc)}") from None
    return parse_listing(body)


async def _fetch(url: str, headers: dict[str, str], max_bytes: int) -> bytes:
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        async with session.get(url, headers=headers, allow_redirects=False) as reply:
            if reply.status in (401, 403):
                raise ListingFailed(f"was refused ({reply.status}): the key was not accepted")
            if reply.status != 200:
                raise ListingFailed(f"was answered with {reply.status}, not a listing")
            encoding = reply.headers.get("Content-Encoding", "identity").lower()
            if encoding not in ("", "identity"):
                raise ListingFailed(f"came {encoding}-encoded, which is not inflated")
            if (reply.content_length or 0) > max_bytes:
                raise ListingFailed(f"is over {max_bytes} bytes")
            pieces, size = [], 0
            async for piece in reply.content.iter_chunked(_PIECE):
                size += len(piece)
                if size > max_bytes:
                    raise ListingFailed(f"is over {max_bytes} bytes")
                pieces.append(piece)
    return b"".join(pieces)


def parse_listing(body: bytes) -> list[Entry]:
    """The entries of an OpenAI-style listing (`{"data": [...]}`, or a bare list, as Together
    answers); `ListingFailed` when it is not one."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ListingFailed("is not JSON") from None
    if isinstance(data, dict):
        data = data.get("data")
    if not isinstance(data, list):
        raise ListingFailed('is not a list of models (no "data" list)')
    entries = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise ListingFailed("lists an entry without a model id")
        entries.append(entry_of(item))
    return entries


def match(name: str, entries: list[Entry]) -> Entry | None:
    """The entry that lists the model called *name* there: its id, else the same id in another
    case, else its canonical slug (`:free` and other variants are told apart: a slug has none)."""
    lowered = name.lower()
    by_case = by_slug = None
    for entry in entries:
        if entry.id == name:
            return entry
        if by_case is None and entry.id.lower() == lowered:
            by_case = entry
        if by_slug is None and (entry.canonical_slug or "").lower() == lowered:
            by_slug = entry
    return by_case or by_slug


def entry_of(item: dict[str, Any]) -> Entry:
    slug = item.get("canonical_slug")
    length = item.get("context_length")
    params = item.get("supported_parameters")
    return Entry(
        id=item["id"],
        canonical_slug=slug if isinstance(slug, str) and slug else None,
        context_length=length if isinstance(length, int) and length > 0 else None,
        free=_free(item.get("pricing")),
        expires=date_of(item.get("expiration_date")),
        tools="tools" in params if isinstance(params, list) else None,
    )


def _free(pricing: Any) -> bool | None:
    """Free when the prompt and completion prices are both stated zero; None when unstated."""
    if not isinstance(pricing, dict):
        return None
    prices = [pricing.get("prompt"), pricing.get("completion")]
    try:
        numbers = [float(p) for p in prices if isinstance(p, str | int | float)]
    except ValueError:
        return None
    if len(numbers) != 2:
        return None
    return all(n == 0 for n in numbers)


def date_of(value: Any) -> str | None:
    """A stated expiry as YYYY-MM-DD: an ISO date or date-time, or a Unix time; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            moment = datetime.datetime.fromtimestamp(value, datetime.UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.date().isoformat()
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return datetime.date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return None


def _said(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__

"""Owed verdicts: which of a caller's seats were answered and are not judged yet.

The loop the bench lives on is ask, check, judge; an agent (or a person) that asked several
panels needs to know which verdicts it still owes. `POST /bench/pending` with `calls` sorts those
ids; without them it lists the caller's newest owed seats. A key sees only its own calls: another
key's call is `unknown`, in the same words as one that does not exist.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import BadRequest
from gateway.request.bounds import whole
from gateway.request.client import Client
from gateway.runtime import Runtime

MAX_CALLS = 1_000
DEFAULT_LIMIT = 50
STATES = ("pending", "judged", "unanswered", "unknown")


def parse_pending(body: dict[str, Any]) -> tuple[list[str] | None, int]:
    """(the call ids asked about, or None for the owed listing; the listing's limit)."""
    unknown = sorted(set(body) - {"calls", "limit"})
    if unknown:
        raise BadRequest(f"Unknown field(s): {', '.join(unknown)}.", param=unknown[0])
    calls = body.get("calls")
    if "calls" in body and (
        not isinstance(calls, list)
        or len(calls) > MAX_CALLS
        or not all(isinstance(c, str) and 0 < len(c) <= 200 for c in calls)
    ):
        raise BadRequest(
            f"`calls` must be a list of at most {MAX_CALLS} call ids such as p1234.member1.",
            param="calls",
        )
    limit = whole(body.get("limit", DEFAULT_LIMIT))
    if limit is None or not 0 < limit <= 500:
        raise BadRequest("`limit` must be a whole number from 1 to 500.", param="limit")
    return calls, limit


async def pending(
    runtime: Runtime, client: Client, calls: list[str] | None, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """With *calls*: each sorted into pending, judged, unanswered or unknown (in the order
    given). Without: the client's newest owed seats, as `pending` ids and `owed` rows."""
    if calls is None:
        owed = await runtime.store.owed(client.owner, limit)
        return {"pending": [row["call"] for row in owed], "owed": owed}
    states = await runtime.store.verdict_states(calls, client.owner)
    sorted_out: dict[str, Any] = {state: [] for state in STATES}
    for call in dict.fromkeys(calls):
        sorted_out[states.get(call, "unknown")].append(call)
    return sorted_out

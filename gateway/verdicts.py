"""Reading a verdict: `{"call", "useful", "note"?, "real"?: [...], "false"?: [...]}`."""

from __future__ import annotations

from typing import Any

from gateway.asking import json_object
from gateway.errors import BadRequest

_FIELDS = {"call", "useful", "note", "real", "false"}
MAX_NOTE = 10_000
MAX_CLAIMS = 200


def parse_verdict(raw: bytes) -> dict[str, Any]:
    body = json_object(raw, "The verdict")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise BadRequest(f"Unknown verdict field(s): {', '.join(unknown)}.", param=unknown[0])
    call = body.get("call")
    if not isinstance(call, str) or not call or len(call) > 200:
        raise BadRequest("`call` must be a call id such as p1234.member1.", param="call")
    if not isinstance(body.get("useful"), bool):
        raise BadRequest("`useful` must be true or false.", param="useful")
    note = body.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
        raise BadRequest(f"`note` must be a string of at most {MAX_NOTE} characters.", param="note")
    for field in ("real", "false"):
        claims = body.get(field)
        if claims is not None and (
            not isinstance(claims, list)
            or len(claims) > MAX_CLAIMS
            or not all(isinstance(c, str) and len(c) <= 2_000 for c in claims)
        ):
            raise BadRequest(
                f"`{field}` must be a list of at most {MAX_CLAIMS} strings.", param=field
            )
    return {
        "call": call,
        "useful": body["useful"],
        "note": note,
        "real": body.get("real"),
        "false": body.get("false"),
    }

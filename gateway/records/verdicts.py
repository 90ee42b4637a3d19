"""Reading a verdict: `{"call", "useful", "note"?, "real"?: [...], "false"?: [...]}`.

Its body (at most 1 MB) is read as a panel's is (gateway/request/body.py): one that could take long
to parse is parsed and checked in the body reader's child process. Every check here is bounded
(a list's length is looked at before its items), so it costs little wherever it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.config.schema import GatewaySettings
from gateway.errors import BadRequest, NotFound
from gateway.store.rows import settled_blind

if TYPE_CHECKING:
    from gateway.runtime import Runtime

_FIELDS = {"call", "useful", "note", "real", "false"}
MAX_NOTE = 10_000
MAX_CLAIMS = 200


def check_verdict(body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A parsed verdict, checked, as the fields recorded (a `request.body.Check`; *settings*
    unused)."""
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


async def judge(
    runtime: Runtime,
    verdict: dict[str, Any],
    *,
    by: str,
    owner: str | None,
    blind: bool = False,
) -> tuple[bool, dict[str, Any]]:
    """Record a parsed verdict for a call *owner* may see (None: any) and move the live figures;
    (written, the call's record with its verdict now); not written for the same verdict again.
    Another key's call is unknown here, in the same words as a call that does not exist:
    existence does not leak. *blind*: the verdict was given where the seat's model was hidden
    (the dashboard with gateway.blind_judging); the store keeps that for a seat's first verdict
    only."""
    call = await runtime.store.call(verdict["call"], owner=owner)
    outcome = None
    if call is not None:  # a key's own calls are in its scope: it was checked when asked
        given = {**verdict, "key_name": by, "blind": blind}
        outcome = await runtime.store.record_verdict(given, owner=owner)
    if call is None or outcome is None:
        raise NotFound(f"Unknown call {verdict['call']!r}.", param="call")
    written, previous = outcome
    if not written:
        call["verdict"] = previous
        return False, call
    settled = settled_blind({**verdict, "blind": blind}, previous)
    prior = None if previous is None else bool(previous["useful"])
    flags = (settled, bool(previous and previous["blind"]))
    runtime.figures.verdict(call["alias"], call["shape"], bool(verdict["useful"]), prior, flags)
    await runtime.live.flush("verdict")
    call["verdict"] = {**{k: verdict[k] for k in _FIELDS if k != "call"}, "blind": settled}
    return True, call

"""Reading a verdict: `{"call", "useful", "note"?, "real"?: [...], "false"?: [...]}`.

Its body (at most 1 MB) is read as a panel's is (gateway/request/body.py): one that could take long
to parse is parsed and checked in the body reader's child process. Every check here is bounded
(a list's length is looked at before its items), so it costs little wherever it runs.

Verdicts are bounded, since each one that differs is a new row of the call's history (200
verdicts of 0.8 MB took 166 MB in 3 s, and a full disk refuses every panel): a note of at most
MAX_NOTE characters, at most MAX_CLAIMS claims of MAX_CLAIM characters in each list, the newest
VERDICTS_KEPT of a call's verdicts kept (gateway/store/statements.py), and at most
VERDICTS_PER_MINUTE verdicts a minute from each gateway key, counted on the board across
workers, apart from its rpm (which counts requests that ask models). Verdicts given without a
key (a gateway without keys, the dashboard) come from whoever runs the gateway and are not
counted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.board import WINDOW_S, BoardFull
from gateway.config.schema import GatewaySettings
from gateway.errors import BadRequest, NotFound, TooManyRequests
from gateway.store.rows import settled_blind

if TYPE_CHECKING:
    from gateway.runtime import Runtime

_FIELDS = {"call", "useful", "note", "real", "false"}
MAX_NOTE = 4_000
MAX_CLAIMS = 50  # in each of `real` and `false`
MAX_CLAIM = 500
VERDICTS_PER_MINUTE = 60


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
            or not all(isinstance(c, str) and len(c) <= MAX_CLAIM for c in claims)
        ):
            raise BadRequest(
                f"`{field}` must be a list of at most {MAX_CLAIMS} strings of at most "
                f"{MAX_CLAIM} characters each.",
                param=field,
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
    only. 429 past a key's VERDICTS_PER_MINUTE."""
    if owner is not None:
        _spend(runtime, by)
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


def _spend(runtime: Runtime, by: str) -> None:
    """One verdict of *by*'s minute, on the board every worker shares; 429 with Retry-After
    when it has none left."""
    ring, now = f"verdicts:{by}", runtime.clock()
    board = runtime.keys.board  # (the runtime's board, typed as made)
    with board.locked():
        try:
            taken = board.take([(ring, VERDICTS_PER_MINUTE)], now, in_flight=False)
        except BoardFull:  # a board sized without room for it: judge, unbounded
            return
        if isinstance(taken, str):
            oldest = board.oldest(ring, VERDICTS_PER_MINUTE, now)
            wait = max(1, int((oldest or now) + WINDOW_S - now) + 1)
            raise TooManyRequests(
                f"Gateway key {by!r} is over its {VERDICTS_PER_MINUTE} verdicts a minute: "
                f"try again in {wait} s.",
                code="too_many_verdicts",
                headers={"Retry-After": str(wait)},
            )

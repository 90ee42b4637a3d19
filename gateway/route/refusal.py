"""A turn no member answered: its record, with each member's failure, and the refusal the
client gets, naming them (gateway/route/start.py chooses and tries the members). A content
filter's refusal is recorded as such (`error_class: content_filter`) and is the client's 400."""

from __future__ import annotations

import time

from gateway.errors import BadRequest, GatewayError, PanelFailed, PayloadTooLarge, TooManyRequests
from gateway.route.ask import RouteAsk
from gateway.route.filtered import CONTENT_FILTER
from gateway.route.member import Failure
from gateway.runtime import Runtime
from gateway.store.rows import CallRow


async def record_failed(
    runtime: Runtime,
    ask: RouteAsk,
    conversation: str,
    turn: int,
    shape: str,
    failures: list[Failure],
    began: float,
) -> None:
    last = failures[-1] if failures else Failure(ask.collection, "error", "no member to try")
    model = runtime.config.catalog.model(last.alias)
    now = runtime.clock()
    await runtime.store.add_call(
        CallRow(
            id=f"{conversation}.{turn}",
            panel_id=conversation,
            seat=f"turn{turn}",
            alias=last.alias,
            model=model.served if model else "",
            connection=model.connection if model else "",
            shape=shape,
            status=last.status,
            error=last.error,
            error_class=last.kind or last.status,
            failure=last.failure,
            seconds=round(time.monotonic() - began, 3),
            first_token_s=None,
            tokens_in=None,
            tokens_out=None,
            answer=None,
            replaces=None,
            replaced_by=None,
            started=now,
            finished=now,
            failed_over=[f.view() for f in failures[:-1]],
            dropped=list(ask.hints.dropped),
        )
    )


# A member refusing the request itself: trying again cannot help, so when every member tried
# refuses it the refusal is the client's (400; 413 when it is the context every one refuses).
_REFUSED = ("refused", "context_window")


def refusal(
    runtime: Runtime, conversation: str, turn: int, failures: list[Failure]
) -> GatewayError:
    """What the client is told when no member answered: its own 400 when a member's content
    filter refused it, 429 when every one was limited, its own 400 (413) when every one refused
    the request itself, else a 502."""
    bench = {
        "bench": {
            "conversation": conversation,
            "call": f"{conversation}.{turn}",
            "turn": turn,
            "failed_over": [f.view() for f in failures],
        }
    }
    headers = {"X-Bench-Conversation": conversation}
    named = "; ".join(f"{f.alias} {f.status}: {f.error}" for f in failures) or "no member"
    if failures and failures[-1].kind == CONTENT_FILTER:  # never handed on (route/filtered.py)
        last = failures[-1]
        return BadRequest(
            f"{last.alias} refused turn {conversation}.{turn} under its provider's content "
            f"policy: {last.error}",
            code="content_policy_violation",
            headers=headers,
            extra=bench,
        )
    if failures and all(f.status in ("rate_limited", "cooling") for f in failures):
        seconds = runtime.rate_limits.retry_after(f.alias for f in failures)
        return TooManyRequests(
            f"Every member tried for turn {conversation}.{turn} is rate limited or cooling "
            f"({named}); try again in {seconds} s.",
            headers={**headers, "Retry-After": str(seconds)},
            extra=bench,
        )
    if failures and all(f.kind in _REFUSED for f in failures):
        if all(f.kind == "context_window" for f in failures):
            return PayloadTooLarge(
                f"No member's context window holds turn {conversation}.{turn} ({named}).",
                headers=headers,
                extra=bench,
            )
        return BadRequest(
            f"Every member refused turn {conversation}.{turn} as asked ({named}).",
            headers=headers,
            extra=bench,
        )
    return PanelFailed(
        f"No member answered turn {conversation}.{turn}: {named}.", headers=headers, extra=bench
    )

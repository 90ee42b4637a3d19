"""The one place a reader's failure becomes one of the gateway's UpstreamErrors.

Both readers fail in litellm's terms: litellm's reader raises litellm's exceptions, and the
direct reader raises the very exceptions litellm would have raised for the same reply
(gateway/upstream/direct/wire_errors.py), so the kind, the wait a provider asks for, its
headers and the message kept on the record are the same whichever read the answer. Besides
those, a read may end by the call's own deadline (`TimeoutError`) or by its byte cap
or by what the sessions refuse to read (gateway/upstream/capped.py's `Refusal`s: an answer
past its cap, an endless event-stream line, a redirect, an encoding not asked for), wrapped by
whoever was reading.

- `call_failed`: a call that failed before its answer was in hand (sent, refused, timed out);
- `stream_failed`: a stream that failed while being read; a seat's stream and a route turn's
  differ only in what they call a timeout and whether a provider error mid-stream keeps its
  kind (a route turn's failover cools a 429 the same way before or after the first piece);
- `classify`: a litellm exception's kind, and what else it says.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import litellm

from gateway.errors import (
    UpstreamAnswerTooLarge,
    UpstreamAuth,
    UpstreamBrokenStream,
    UpstreamContextWindow,
    UpstreamError,
    UpstreamFailed,
    UpstreamRateLimited,
    UpstreamRefused,
    UpstreamTimeout,
    UpstreamUnreachable,
)
from gateway.upstream.capped import AnswerTooLarge, LineTooLong, Refusal, refusal_in
from gateway.upstream.wording import provider_at, provider_words, unreachable_words

_WINDOW = re.compile(r"maximum context length is (\d+)", re.IGNORECASE)
# An image's data URL, as a provider may echo it in an error: never into a record or a log.
_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/=_-]*")
_WAIT = re.compile(r"(?:try again|retry) in (\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b", re.IGNORECASE)


def call_failed(
    exc: BaseException, timeout: float, params: dict[str, Any] | None = None
) -> UpstreamError:
    """A call's failure as the gateway's error. *params*: the model's, to name where an
    unreachable provider is (a seat's record names it; a route turn's names the member)."""
    if isinstance(exc, UpstreamError):
        return exc
    if isinstance(exc, TimeoutError):
        return UpstreamTimeout(f"no answer within {timeout:g} s")
    if (refused := refusal_in(exc)) is not None:
        return refusal(refused)
    error = classify(exc, timeout)
    if isinstance(error, UpstreamUnreachable):
        error.message = unreachable_words(exc)
    if params is not None and not isinstance(error, UpstreamTimeout):
        error.message = f"{provider_at(params)}: {error.message}"  # where to look
    error.args = (error.message,)
    return error


def stream_failed(exc: BaseException, timeout: float, *, seat: bool) -> UpstreamError:
    """A failure while an opened stream was read. A seat's stream (*seat*) is broken off by
    anything but its deadline; a route turn's keeps the failure's kind, its timeout named as a
    stall (litellm holds each read to the call's *timeout*)."""
    if isinstance(exc, UpstreamError):
        return exc
    if (refused := refusal_in(exc)) is not None:
        return refusal(refused)
    if seat:
        if isinstance(exc, TimeoutError | litellm.Timeout):
            return call_failed(exc, timeout)
        return UpstreamBrokenStream(f"stream broke off: {short(exc)}")
    error = classify(exc, timeout)
    if isinstance(error, UpstreamTimeout):
        return UpstreamTimeout(f"the stream stalled: nothing within {timeout:g} s")
    if type(error) is UpstreamFailed:
        return UpstreamBrokenStream(f"stream broke off: {short(exc)}")
    return error


def refusal(refused: Refusal) -> UpstreamError:
    """What a reply the sessions refused to read is: over its limit (the client's bound, as an
    answer too long is), or a broken stream (an endless line: no event stream), or a provider
    that failed the call (a redirect never followed, an encoding not asked for)."""
    if isinstance(refused, AnswerTooLarge):
        return UpstreamAnswerTooLarge(str(refused))
    if isinstance(refused, LineTooLong):
        return UpstreamBrokenStream(f"stream broke off: {refused}")
    return UpstreamFailed(str(refused))


def classify(exc: BaseException, timeout: float) -> UpstreamError:
    """Map a litellm/SDK exception to the gateway's tree, with the provider's HTTP status and
    error code (the SDK reads it from the error's body; its message leaves it out)."""
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    error = _kind_of(exc, timeout, status)
    error.status = status
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    code = getattr(exc, "code", None) or (inner.get("code") if isinstance(inner, dict) else None)
    error.code = code if isinstance(code, str) else None
    return error


def _kind_of(exc: BaseException, timeout: float, status: int | None) -> UpstreamError:
    """Order matters: subclasses first."""
    message = short(exc, status)
    if isinstance(exc, litellm.RateLimitError):
        return UpstreamRateLimited(message, retry_after=_retry_after(exc), headers=headers_of(exc))
    if isinstance(exc, litellm.Timeout):
        return UpstreamTimeout(f"no answer within {timeout:g} s")
    if isinstance(exc, litellm.ContextWindowExceededError) or _WINDOW.search(message):
        found = _WINDOW.search(message)
        return UpstreamContextWindow(message, int(found.group(1)) if found else None)
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return UpstreamAuth(message)
    if isinstance(exc, litellm.APIConnectionError) or _refused(exc):
        return UpstreamUnreachable(message)
    if isinstance(exc, litellm.BadRequestError | litellm.UnprocessableEntityError):
        return UpstreamRefused(message)  # litellm's UnsupportedParamsError is one too
    return UpstreamFailed(message)


def headers_of(reply: object) -> dict[str, str]:
    """The provider's response headers, lower-cased: litellm keeps them on a response (and on a
    stream) as `_response_headers`, and on an exception as its httpx response's headers."""
    found = getattr(reply, "_response_headers", None)
    if found is None:
        found = getattr(getattr(reply, "response", None), "headers", None)
    if found is None:
        found = getattr(reply, "litellm_response_headers", None)
    try:
        return {str(k).lower(): str(v) for k, v in (found or {}).items()}
    except (AttributeError, TypeError):
        return {}


def endpoint_of(params: dict[str, Any]) -> str:
    """Where a model's calls go, as host:port, for an error a person can act on. Only the host
    and port: an api_base may carry credentials or a key in its query, and they stay out."""
    base = params.get("api_base") or params.get("base_url")
    if not isinstance(base, str) or not base:
        return f"{params.get('model', 'the model')}'s default endpoint"
    try:
        parts = urlsplit(base if "//" in base else f"//{base}")
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        return "its api_base (unreadable)"
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def _refused(exc: BaseException) -> bool:
    """A refused connection surfaces as InternalServerError; the cause chain tells the truth."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionError | OSError) and not isinstance(seen, TimeoutError):
            return True
        name = type(seen).__name__
        if "ClientConnector" in name or "ConnectError" in name or "ServerDisconnected" in name:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait: retry-after-ms, Retry-After, or the message."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    found = _WAIT.search(str(exc))
    if found:
        value = float(found.group(1))
        return value / 1000 if found.group(2).lower() == "ms" else value
    return None


def short(exc: BaseException, status: int | None = None) -> str:
    """The provider's words (after its status, when it gave one), briefly, without an image's
    data."""
    text = _DATA_URL.sub("[image]", provider_words(exc, status))
    return text if len(text) <= 500 else text[:497] + "..."

"""What a provider's failure says, read from litellm's exceptions: which of the gateway's
UpstreamError kinds it is, how long the provider asked us to wait, its response headers, and a
short line for the record. Seat calls (`calls`) and route turns (`relay`) read them alike."""

from __future__ import annotations

import re

import litellm

from gateway.errors import (
    UpstreamAuth,
    UpstreamContextWindow,
    UpstreamError,
    UpstreamFailed,
    UpstreamRateLimited,
    UpstreamRefused,
    UpstreamTimeout,
    UpstreamUnreachable,
)

_WINDOW = re.compile(r"maximum context length is (\d+)", re.IGNORECASE)
# An image's data URL, as a provider may echo it in an error: never into a record or a log.
_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/=_-]*")
_WAIT = re.compile(r"(?:try again|retry) in (\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b", re.IGNORECASE)


def classify(exc: BaseException, timeout: float) -> UpstreamError:
    """Map a litellm/SDK exception to the gateway's tree, with the provider's HTTP status and
    error code (the SDK reads it from the error's body; its message leaves it out)."""
    error = _kind_of(exc, timeout)
    status = getattr(exc, "status_code", None)
    error.status = status if isinstance(status, int) and not isinstance(status, bool) else None
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    code = getattr(exc, "code", None) or (inner.get("code") if isinstance(inner, dict) else None)
    error.code = code if isinstance(code, str) else None
    return error


def _kind_of(exc: BaseException, timeout: float) -> UpstreamError:
    """Order matters: subclasses first."""
    message = short(exc)
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


def short(exc: BaseException) -> str:
    text = _DATA_URL.sub("[image]", str(exc)).strip() or type(exc).__name__
    text = text.removeprefix("litellm.")
    return text if len(text) <= 500 else text[:497] + "..."

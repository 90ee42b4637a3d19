"""Every error the gateway knows, and how each is shown to a client.

GatewayError                  rendered as OpenAI's {"error": {message, type, param, code}}
├── BadRequest          400   malformed JSON or fields, unknown shape or alias, tools
├── Unauthorized        401   missing, malformed or unknown gateway key
├── Forbidden           403   a collection outside the key's scope
├── NotFound            404   unknown collection, call or panel
├── ConfigRefused       409   a reload's config that check-config refuses, or none can be taken
├── RequestTimeout      408   a request body not arrived within `gateway.body_timeout_s`
├── PayloadTooLarge     413   body over the limit, or a prompt no member can hold
├── TooManyRequests     429   every seat rate limited or cooling, or a key over its rpm
├── PanelFailed         502   seats were called and none answered
├── Unseatable          503   nobody can be seated
├── Overloaded          503   the worker has its most panels or seat calls in flight
├── RecordsUnavailable  503   the record store cannot be reached (reads, verdicts, keys)
└── RecordsBacklogged   503   too many seat rows wait on disk for the store: no new panels

UpstreamError                 one seat's failure: becomes a seat status, never an HTTP reply
├── UpstreamRateLimited       429 (retry_after when the upstream said; its headers)
├── UpstreamTimeout           no answer within the seat's timeout
├── UpstreamUnreachable       connection refused or reset
├── UpstreamAuth              401/403 from the provider
├── UpstreamContextWindow     the prompt is over the model's window (limit when stated)
├── UpstreamRefused           the provider refused the request itself (400, 422: its parameters)
├── UpstreamBrokenStream      a stream that broke off or was malformed
├── UpstreamAnswerTooLarge    an answer over `gateway.max_answer_bytes` (reading stopped there)
├── RouteStreamOverTime       a route stream still going after `gateway.route_stream_max_s`
└── UpstreamFailed            anything else the provider answered with an error
"""

from __future__ import annotations

from typing import Any

from gateway.replies import JSONResponse


class GatewayError(Exception):
    status = 500
    type = "server_error"
    code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code or self.code
        self.headers = headers or {}
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        error = {"message": self.message, "type": self.type, "param": self.param, "code": self.code}
        return {"error": error, **self.extra}


class BadRequest(GatewayError):
    status, type, code = 400, "invalid_request_error", "invalid_request"


class Unauthorized(GatewayError):
    status, type, code = 401, "authentication_error", "invalid_api_key"


class Forbidden(GatewayError):
    status, type, code = 403, "permission_error", "collection_not_allowed"


class NotFound(GatewayError):
    status, type, code = 404, "not_found_error", "not_found"


class Conflict(GatewayError):
    status, type, code = 409, "invalid_request_error", "conflict"


class ConfigRefused(GatewayError):
    """`POST /bench/reload`: the config file is refused (or cannot be taken by this gateway);
    the running config is kept."""

    status, type, code = 409, "invalid_request_error", "config_refused"


class RequestTimeout(GatewayError):
    """A body still arriving after `gateway.body_timeout_s`: the connection is closed with it."""

    status, type, code = 408, "invalid_request_error", "timeout"


class PayloadTooLarge(GatewayError):
    status, type, code = 413, "invalid_request_error", "too_large"


class TooManyRequests(GatewayError):
    status, type, code = 429, "rate_limit_error", "rate_limited"


class PanelFailed(GatewayError):
    status, type, code = 502, "upstream_error", "no_seat_answered"


class Unseatable(GatewayError):
    status, type, code = 503, "service_unavailable", "no_seat_available"


class Overloaded(GatewayError):
    """Admission control: refused before anyone is seated, with a Retry-After."""

    status, type, code = 503, "service_unavailable", "overloaded"


class RecordsUnavailable(GatewayError):
    """PostgreSQL cannot be reached: what must read or change a record waits (panels do not:
    their seat rows are kept on disk until it is back)."""

    status, type, code = 503, "service_unavailable", "records_unavailable"


class RecordsBacklogged(GatewayError):
    """Admission: the seat rows waiting on disk for PostgreSQL reached their bound, so no new
    panel is seated until they are written (none is ever dropped)."""

    status, type, code = 503, "service_unavailable", "records_backlogged"


def render(error: GatewayError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


class UpstreamError(Exception):
    """A seat's call failed; `kind` is the error class written on the seat's record."""

    kind = "upstream"
    status: int | None = None  # the provider's HTTP status, when it answered with one
    code: str | None = None  # the provider's error code (`content_policy_violation`), if named

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UpstreamRateLimited(UpstreamError):
    kind = "rate_limit"

    def __init__(
        self,
        message: str,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.headers = headers or {}  # the provider's response headers, lower-cased


class UpstreamTimeout(UpstreamError):
    kind = "timeout"


class UpstreamUnreachable(UpstreamError):
    kind = "connection"


class UpstreamAuth(UpstreamError):
    kind = "auth"


class UpstreamContextWindow(UpstreamError):
    kind = "context_window"

    def __init__(self, message: str, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class UpstreamRefused(UpstreamError):
    """The provider said the request itself is wrong for it (unsupported or invalid
    parameters, a content policy): trying it again as it is cannot help."""

    kind = "refused"


class UpstreamBrokenStream(UpstreamError):
    kind = "broken_stream"


class UpstreamAnswerTooLarge(UpstreamError):
    kind = "too_large"


class RouteStreamOverTime(UpstreamError):
    kind = "timeout"


class UpstreamFailed(UpstreamError):
    kind = "upstream"

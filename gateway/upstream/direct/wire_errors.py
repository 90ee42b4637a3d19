"""A direct read's failures as the very exceptions litellm would have raised for them.

Why: the gateway classifies litellm's exceptions in one place (gateway/upstream/failures.py),
and what it learns from them (the kind, the Retry-After, the quota signals in the message and
the headers, the context window) steers cooling, quotas, reserves and failover. A failure read
directly is therefore made into litellm's exception the way litellm makes it: the OpenAI SDK's
error for the response, then litellm's own mapping of it (`exception_type`), and in a stream
the `MidStreamFallbackError` its stream wrapper raises. The records and the messages a client
sees are then the same whichever reader read the answer. Failures are rare; the cost of
building them is of no account.
"""

from __future__ import annotations

import json
from typing import Any

import httpx  # litellm's HTTP types: its errors carry an httpx response and its headers
import httpx2  # the OpenAI SDK's own HTTP types, which its errors are built from
import litellm
import openai
from litellm.exceptions import MidStreamFallbackError
from litellm.litellm_core_utils.exception_mapping_utils import exception_type
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
from litellm.llms.openai.common_utils import OpenAIError, upstream_error_response

from gateway.upstream.direct.wire import Target

_SDK = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1/", max_retries=0)


def _mapped(target: Target, original: Exception) -> Exception:
    """litellm's mapping of *original* (it raises the mapped exception; caught here)."""
    try:
        exception_type(  # type: ignore[no-untyped-call]
            model=target.model,
            custom_llm_provider=target.provider,
            original_exception=original,
            completion_kwargs={},
            extra_kwargs={},
        )
    except Exception as mapped:
        return mapped
    return original


def status_error(target: Target, status: int, headers: dict[str, str], body: bytes) -> Exception:
    """The exception for an answer with an error *status*, as litellm raises it."""
    request = httpx.Request("POST", target.url)
    response = httpx.Response(
        status, headers=headers, stream=httpx.ByteStream(body), request=request
    )
    response.read()
    # the SDK reads the response as its own (status, text, headers): litellm's path hands it
    # an httpx one too, whose headers litellm then keeps on its exception
    sdk = _SDK._make_status_error_from_response(response)  # type: ignore[arg-type]
    original = OpenAIError(
        status_code=status,
        message=getattr(sdk, "message", str(sdk)),
        response=upstream_error_response(sdk),
        headers=dict(response.headers),
        body=getattr(sdk, "body", None),
    )
    return _mapped(target, original)


def in_stream(target: Target, original: Exception, sent_any: bool, text: str) -> Exception:
    """The exception a stream's failure becomes: litellm's mapping of the SDK's error,
    wrapped as its stream wrapper wraps it (a refusal of the request stays as it is)."""
    mapped = _mapped(target, original)
    status = getattr(mapped, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500 and status not in (408, 429):
        return mapped
    return MidStreamFallbackError(
        message=str(mapped),
        model=target.model,
        llm_provider=target.provider,
        original_exception=mapped,
        generated_content=text,
        is_pre_first_chunk=not sent_any,
    )


def error_event(target: Target, payload: dict[str, Any]) -> Exception:
    """The SDK's error for an `{"error": ...}` event in a stream."""
    error = payload.get("error")
    message = None
    if isinstance(error, dict):
        message = error.get("message")
    request = httpx2.Request("POST", target.url)
    return openai.APIError(
        message=message
        if isinstance(message, str) and message
        else ("An error occurred during streaming"),
        request=request,
        body=error,
    )


def unreadable(line: bytes, payload: bytes | None = None) -> Exception:
    """What the SDK raises for an event *line* that is not UTF-8, or whose `data:` *payload*
    is not JSON (it decodes the whole line, then parses the data)."""
    try:
        line.decode("utf-8")
        json.loads((line if payload is None else payload).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return exc
    return ValueError("unreadable event")


def cut(target: Target) -> Exception:
    """The SDK's error for a connection lost mid-answer."""
    return openai.APIConnectionError(request=httpx2.Request("POST", target.url))


def ended_early() -> Exception:
    """litellm's error for a stream that ended before its finish."""
    return CustomStreamWrapper._stream_eof_error()


def timed_out(target: Target, timeout: float) -> Exception:
    return litellm.Timeout(
        message=f"no answer within {timeout:g} s", model=target.model, llm_provider=target.provider
    )


def unreadable_answer(target: Target, body: bytes) -> Exception:
    """litellm's exception for a plain answer that is not a chat completion (its OpenAI
    handler makes any failure to read one a 500 of its own)."""
    found = unreadable(body)
    if isinstance(found, ValueError) and str(found) == "unreadable event":
        found = ValueError("the answer is not a chat completion")
    return _mapped(target, OpenAIError(status_code=500, message=str(found)))


def unreachable(target: Target) -> Exception:
    """litellm's exception for a request that never reached the provider (its OpenAI handler
    makes the SDK's connection error a 500 of its own)."""
    message = str(cut(target))
    return _mapped(target, OpenAIError(status_code=500, message=message))

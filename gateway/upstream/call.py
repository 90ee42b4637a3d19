"""One call to one model, as given: through litellm, or sent and read by the direct reader
(gateway/upstream/direct.py); every failure classified once, here, into the gateway's
UpstreamError tree (gateway/upstream/failures.py), whichever read it. The seam
(gateway/upstream/seam.py) adds the queues and the shared sessions around it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any
from urllib.parse import urlsplit

import litellm

from gateway.errors import (
    UpstreamAnswerTooLarge,
    UpstreamBrokenStream,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnreachable,
)
from gateway.tokens import counts
from gateway.upstream.answer import Answer
from gateway.upstream.capped import capped, raw_cap, too_large_in
from gateway.upstream.direct import DirectReader
from gateway.upstream.failures import classify, headers_of, short
from gateway.upstream.setup_queue import SetupQueue


async def call_model(
    params: dict[str, Any],
    messages: list[dict[str, Any]],
    sampling: dict[str, Any],
    timeout: float,
    *,
    stream: bool = False,
    max_answer_bytes: int | None = None,
    direct: DirectReader | None = None,
    reading: SetupQueue | None = None,
) -> Answer:
    """Ask one model once, as given (no queue, no shared session unless *params* names one;
    *direct*: sent and read by that reader instead of litellm).
    Raises an UpstreamError subclass on every kind of failure, UpstreamAnswerTooLarge for an
    answer over *max_answer_bytes* (of UTF-8 text; reading stops once the raw response is past
    `raw_cap` of it, when it comes through a session built with `CappedResponse`)."""
    kwargs = {**sampling, **params, "messages": messages, "timeout": timeout}
    kwargs.update(num_retries=0, max_retries=0)
    started = time.monotonic()
    limit = max_answer_bytes
    guard = capped(raw_cap(limit, stream), limit) if limit else contextlib.nullcontext()
    try:
        async with asyncio.timeout(timeout + 1.0):  # litellm's own timeout is the first guard
            with guard:
                if direct is not None:
                    return await _read_directly(
                        direct, params, messages, sampling, timeout, stream, started, limit,
                        reading,
                    )  # fmt: skip
                if stream:
                    return await _streamed(kwargs, started, limit)
                response = await litellm.acompletion(**kwargs)
    except TimeoutError as exc:
        raise UpstreamTimeout(f"no answer within {timeout:g} s") from exc
    except UpstreamError:
        raise
    except Exception as exc:  # every litellm failure is classified here, once
        if (over := too_large_in(exc)) is not None:
            raise UpstreamAnswerTooLarge(str(over)) from exc
        error = classify(exc, timeout)
        if isinstance(error, UpstreamUnreachable):
            error = UpstreamUnreachable(f"cannot reach {endpoint_of(params)}: {error.message}")
        raise error from exc
    choice = response.choices[0]
    tokens_in, tokens_out = counts(getattr(response, "usage", None), params.get("model", ""))
    text = choice.message.content or ""
    if limit and len(text) > limit // 4 and len(text.encode()) > limit:
        raise UpstreamAnswerTooLarge(f"the answer was over the limit of {limit} bytes")
    return Answer(
        text=text,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        finish_reason=choice.finish_reason,
        headers=headers_of(response),
    )


async def _streamed(kwargs: dict[str, Any], started: float, limit: int | None = None) -> Answer:
    """Stream the seat's answer: the first token's time is known, and a stream that breaks off
    before its finish is an error, never a truncated answer passed off as whole. An answer that
    grows past *limit* bytes stops being read there."""
    kwargs.update(stream=True, stream_options={"include_usage": True})
    return await _read_stream(await litellm.acompletion(**kwargs), started, limit)


async def _read_directly(
    direct: DirectReader,
    params: dict[str, Any],
    messages: list[dict[str, Any]],
    sampling: dict[str, Any],
    timeout: float,
    stream: bool,
    started: float,
    limit: int | None,
    reading: SetupQueue | None,
) -> Answer:
    if stream:
        opened = await direct.stream(params, messages, sampling, timeout)
        return await _read_stream(opened, started, limit)
    answer = await direct.answer(params, messages, sampling, timeout, reading)
    text = answer.text
    if limit and len(text) > limit // 4 and len(text.encode()) > limit:
        raise UpstreamAnswerTooLarge(f"the answer was over the limit of {limit} bytes")
    return answer


async def _read_stream(stream: Any, started: float, limit: int | None) -> Answer:
    """Read a seat's opened stream to its end (litellm's or a direct one)."""
    parts: list[str] = []
    size = 0
    first: float | None = None
    finish: str | None = None
    tokens_in = tokens_out = 0
    chunks = aiter(stream)
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            break
        except (TimeoutError, litellm.Timeout):
            raise
        except Exception as exc:
            if (over := too_large_in(exc)) is not None:
                raise UpstreamAnswerTooLarge(str(over)) from exc
            raise UpstreamBrokenStream(f"stream broke off: {short(exc)}") from exc
        for choice in chunk.choices or ():
            text = getattr(choice.delta, "content", None)
            if text:
                if first is None:
                    first = time.monotonic() - started
                parts.append(text)
                size += len(text.encode())
                if limit and size > limit:
                    await _close(stream)
                    raise UpstreamAnswerTooLarge(f"the answer was over the limit of {limit} bytes")
            finish = choice.finish_reason or finish
        usage = getattr(chunk, "usage", None)
        if usage:
            prompt, completion = counts(usage, getattr(chunk, "model", None) or "")
            tokens_in, tokens_out = prompt or tokens_in, completion or tokens_out
    if finish is None:
        raise UpstreamBrokenStream("stream broke off before its finish")
    return Answer("".join(parts), tokens_in, tokens_out, first, finish, headers_of(stream))


async def _close(stream: Any) -> None:
    """Stop reading a stream: its connection is closed rather than drained."""
    closing = getattr(stream, "aclose", None)
    if closing is not None:
        with contextlib.suppress(Exception):
            await closing()


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

"""The direct reader: a call to an OpenAI-compatible provider sent and read by the gateway.

litellm builds the request (gateway/upstream/direct/wire.py); it goes out on a session of the
gateway's own, one connection pool for every such call, and the answer comes back read here:
a plain one as one JSON document parsed once, a streamed one line by line
(gateway/upstream/direct/sse_reader.py). A failed answer is made into the exception litellm
would have raised (gateway/upstream/direct/wire_errors.py), so the seam maps both readers'
failures in the same place, the same way (gateway/upstream/failures.py). Which models are read
so: `reads_direct` (config `upstream_reader: auto|litellm|direct`, per model or in `gateway`).
"""

from __future__ import annotations

import os
import time
from typing import Any

import aiohttp
import litellm
import orjson

from gateway.tokens import counts
from gateway.upstream.answer import Answer, read_stream
from gateway.upstream.capped import session_options
from gateway.upstream.direct import wire_errors
from gateway.upstream.direct.sse_reader import DirectStream
from gateway.upstream.direct.wire import Target, build, target_of
from gateway.upstream.setup_queue import SetupQueue

READERS = ("auto", "litellm", "direct")

# Providers litellm treats as OpenAI-compatible whose key is a plain API key (no OAuth, no
# signed requests): their calls are read directly under `auto`.
OPENAI_COMPATIBLE = frozenset(
    {
        "openai", "custom_openai", "openrouter", "groq", "nvidia_nim", "mistral", "deepseek",
        "together_ai", "fireworks_ai", "cerebras", "hosted_vllm", "lm_studio", "xai",
        "deepinfra", "perplexity", "llamafile", "litellm_proxy", "sambanova", "nebius",
        "moonshot", "dashscope", "novita", "hyperbolic", "lambda_ai", "baseten", "zai",
    }
)  # fmt: skip


def provider_of(model: str) -> str | None:
    try:
        return litellm.get_llm_provider(model)[1]
    except Exception:  # a model litellm cannot place is litellm's to refuse
        return None


def reads_direct(model: str, reader: str) -> bool:
    """Is a call to *model* (litellm's `provider/name`) read directly under *reader*?"""
    if reader == "litellm":
        return False
    return provider_of(model) in OPENAI_COMPATIBLE


class DirectReader:
    """The session and the per-model targets of direct calls, opened and closed by the seam.
    *reading*: the queue answers are read through one at a time, entered once the headers are
    in (a thousand answers arriving together are otherwise all ready on the loop at once, and a
    health check waits behind every one of them)."""

    def __init__(self, reading: SetupQueue | None = None) -> None:
        self.session: aiohttp.ClientSession | None = None
        self.reading = reading
        self._targets: dict[int, tuple[dict[str, Any], Target]] = {}

    async def open(self) -> None:
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=300),
            cookie_jar=aiohttp.DummyCookieJar(),  # providers never share cookies through us
            trust_env=os.environ.get("AIOHTTP_TRUST_ENV") == "True",
            **session_options(),  # what a reply may bring in (gateway/upstream/capped.py)
            skip_auto_headers=("User-Agent",),
        )

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None

    def target(self, params: dict[str, Any]) -> Target:
        """The model's target, worked out once per model (its params are the config's own)."""
        found = self._targets.get(id(params))
        if found is None or found[0] is not params:
            found = (params, target_of(params))
            self._targets[id(params)] = found
        return found[1]

    async def _send(self, target: Target, body: bytes, headers: dict[str, str], url: str,
                    timeout: float) -> aiohttp.ClientResponse:  # fmt: skip
        if self.session is None:
            await self.open()
        assert self.session is not None
        limits = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)
        try:
            return await self.session.post(url, data=body, headers=headers, timeout=limits)
        except TimeoutError as exc:
            raise wire_errors.timed_out(target, timeout) from exc
        except (aiohttp.ClientConnectionError, OSError) as exc:  # as the SDK reports it
            raise wire_errors.unreachable(target) from exc

    async def call(
        self,
        params: dict[str, Any],
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        timeout: float,
        *,
        stream: bool,
        limit: int | None,
    ) -> Answer:
        """One seat's call, plain or streamed; raises litellm's exception for a failure (and
        the gateway's own for a stream read to a bad end)."""
        if not stream:
            return await self.answer(params, messages, sampling, timeout)
        started = time.monotonic()
        opened = await self.stream(params, messages, sampling, timeout)
        return await read_stream(opened, started, timeout, limit)

    async def open_turn(
        self, params: dict[str, Any], request: dict[str, Any], timeout: float
    ) -> DirectStream:
        """A route turn's streamed reply, opened."""
        messages = request.get("messages") or []
        asked = {k: v for k, v in request.items() if k != "messages"}
        return await self.stream(params, messages, asked, timeout)

    async def answer(
        self,
        params: dict[str, Any],
        messages: list[dict[str, Any]],
        asked: dict[str, Any],
        timeout: float,
    ) -> Answer:
        """A plain call's answer; raises litellm's exception for a failure."""
        target = self.target(params)
        request = build(target, params, messages, asked, stream=False)
        response = await self._send(target, request.body, request.headers, request.url, timeout)
        reading = self.reading
        turn = await reading.enter() if reading is not None else None
        try:
            try:
                body = await response.read()
            except TimeoutError as exc:
                raise wire_errors.timed_out(target, timeout) from exc
            headers = {k.lower(): v for k, v in response.headers.items()}
            if response.status >= 400:
                raise wire_errors.status_error(target, response.status, headers, body)
        finally:
            response.release()
            if turn is not None:
                turn.end()
        try:
            reply = orjson.loads(body)
            choice = reply["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise wire_errors.unreadable_answer(target, body) from exc
        tokens_in, tokens_out = counts(reply.get("usage"), target.model)
        return Answer(
            text=message.get("content") or "",
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            finish_reason=choice.get("finish_reason"),
            headers=headers,
        )

    async def stream(
        self,
        params: dict[str, Any],
        messages: list[dict[str, Any]],
        asked: dict[str, Any],
        timeout: float,
    ) -> DirectStream:
        """A streamed call, opened (its headers are in); raises litellm's exception for a
        refusal."""
        target = self.target(params)
        request = build(target, params, messages, asked, stream=True)
        response = await self._send(target, request.body, request.headers, request.url, timeout)
        if response.status >= 400:
            try:
                body = await response.read()
            finally:
                response.release()
            headers = {k.lower(): v for k, v in response.headers.items()}
            raise wire_errors.status_error(target, response.status, headers, body)
        return DirectStream(response, target, messages, timeout)

"""litellm's reader: a call sent and read by litellm (`acompletion`), through one shared session.

- One shared HTTP session (one connection pool) for every call it reads: litellm sends through
  it (`shared_session`), with no cap on connections per host beyond the panel sizes.
- litellm's per-call request set-up runs on the event loop for providers where it is CPU work
  only, instead of a thread hop each way (gateway/upstream/litellm/inline.py).
- Set-ups pass a queue one at a time, in arrival order, until their request leaves
  (gateway/upstream/setup_queue.py); the session's trace hook says when it does.
- Answers are read and parsed one at a time in order of arrival, through a second queue
  entered when a response's headers arrive: a thousand answers arriving together would
  otherwise all be ready on the loop at once, and a health check or a new client would wait
  behind every one of them; through the queue each waits behind at most one.

Its failures are litellm's exceptions, raised as they are: the seam maps them
(gateway/upstream/failures.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import time
from typing import Any

import aiohttp
import litellm  # offline: the process owner set its environment first (gateway/serve/process.py)
import litellm.main

from gateway.tokens import counts
from gateway.upstream.answer import Answer, read_stream
from gateway.upstream.capped import session_options
from gateway.upstream.failures import headers_of
from gateway.upstream.litellm import inline
from gateway.upstream.litellm.stream import LitellmStream
from gateway.upstream.setup_queue import Passage, SetupQueue

litellm.suppress_debug_info = True
litellm.telemetry = False
# No logging callbacks are registered, so nothing receives prompts; (turn_off_message_logging
# would make litellm deep-copy and redact every call's messages for no reader.)

# Providers whose request set-up is CPU work only (a static key, no credential fetch, no file or
# network access before the request), so it may run on the event loop (see litellm/inline.py).
SETUP_INLINE = frozenset(
    {
        "openai", "openrouter", "groq", "mistral", "nvidia_nim", "together_ai", "deepseek",
        "fireworks_ai", "hosted_vllm", "lm_studio", "ollama", "ollama_chat", "xai", "cerebras",
        "deepinfra", "perplexity", "anthropic", "gemini", "litellm_proxy", "llamafile",
    }
)  # fmt: skip
_PASSAGE: contextvars.ContextVar[Passage | None] = contextvars.ContextVar(
    "bench_passage", default=None
)
# the turns a call took at the reading queue, ended when the call returns
_READING: contextvars.ContextVar[list[Passage] | None] = contextvars.ContextVar(
    "bench_reading", default=None
)


class LitellmReader:
    """Opened and closed by the seam; *reading*: the queue answers are read through, shared
    with the direct reader."""

    def __init__(self, reading: SetupQueue) -> None:
        self.session: aiohttp.ClientSession | None = None
        self.inline_models: frozenset[str] = frozenset()
        self.setups = SetupQueue()
        self.reading = reading
        self.executor: inline.InlineWhere | None = None

    async def open(self, served: list[str]) -> None:
        know_models(served)
        self.inline_models = frozenset(m for m in served if provider_of(m) in SETUP_INLINE)
        self.executor = inline.install(asyncio.get_running_loop(), self._is_setup)
        trace = aiohttp.TraceConfig()
        trace.on_request_start.append(_request_leaving)
        trace.on_request_end.append(self._answer_arrived)
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=300),
            cookie_jar=aiohttp.DummyCookieJar(),  # providers never share cookies through us
            trust_env=litellm.aiohttp_trust_env or os.environ.get("AIOHTTP_TRUST_ENV") == "True",
            trace_configs=[trace],
            **session_options(),  # what a reply may bring in (gateway/upstream/capped.py)
        )
        await warm_up()

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None

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
        """One seat's call, through the set-up queue and the shared session; raises litellm's
        exceptions (and the gateway's own for a stream read to a bad end)."""
        kwargs = self._kwargs(params, {**sampling, "messages": messages}, timeout, stream)
        model = params.get("model", "")
        reading: list[Passage] = []
        started = time.monotonic()
        async with self.setups.passage(model) as passage:
            token, turns = _PASSAGE.set(passage), _READING.set(reading)
            try:
                response = await litellm.acompletion(**kwargs)
                if stream:
                    answer = await read_stream(LitellmStream(response), started, timeout, limit)
                else:
                    answer = _answer_of(response)
            finally:
                _PASSAGE.reset(token)
                _READING.reset(turns)
                for turn in reading:
                    turn.end()
            self.setups.succeeded(model, passage)
            return answer

    async def open_turn(
        self, params: dict[str, Any], request: dict[str, Any], timeout: float, *, stream: bool
    ) -> LitellmStream | litellm.ModelResponse:
        """A route turn's reply, opened: its stream of chunks, or (not *stream*) litellm's
        whole response; raises litellm's exceptions."""
        reply = await litellm.acompletion(**self._kwargs(params, request, timeout, stream))
        return LitellmStream(reply) if stream else reply

    def _kwargs(
        self, params: dict[str, Any], request: dict[str, Any], timeout: float, stream: bool
    ) -> dict[str, Any]:
        kwargs = {**request, **params, "timeout": timeout, "num_retries": 0, "max_retries": 0}
        if self.session is not None:
            kwargs["shared_session"] = self.session
        if stream:
            kwargs.update(stream=True, stream_options={"include_usage": True})
        return kwargs

    async def _answer_arrived(self, session: Any, context: Any, params: Any) -> None:
        """A response's headers are in: wait for this call's turn to read and parse it (held
        until the call returns, or `hold_s`, whichever comes first)."""
        reading = _READING.get()
        if reading is not None:
            reading.append(await self.reading.enter())

    def _is_setup(self, fn: Any) -> bool:
        """Is *fn* litellm's set-up of a call to a model whose set-up is CPU work only?
        (`acompletion` submits ``partial(context.run, partial(completion, **kwargs))``.)"""
        if not isinstance(fn, functools.partial) or len(fn.args) != 1:
            return False
        if not isinstance(getattr(fn.func, "__self__", None), contextvars.Context):
            return False
        setup = fn.args[0]
        return (
            isinstance(setup, functools.partial)
            and setup.func is litellm.main.completion
            and setup.keywords.get("model") in self.inline_models
        )


def _answer_of(response: Any) -> Answer:
    choice = response.choices[0]
    model = getattr(response, "model", None) or ""
    tokens_in, tokens_out = counts(getattr(response, "usage", None), model)
    return Answer(
        text=choice.message.content or "",
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        finish_reason=choice.finish_reason,
        headers=headers_of(response),
    )


async def _request_leaving(session: Any, context: Any, params: Any) -> None:
    passage = _PASSAGE.get()
    if passage is not None:
        passage.leave()


def provider_of(model: str) -> str | None:
    """litellm's provider of *model* (`provider/name`), None for one it cannot place."""
    try:
        return litellm.get_llm_provider(model)[1]
    except Exception:  # a model litellm cannot place keeps its set-up in a thread
        return None


def know_models(served: list[str]) -> None:
    """Tell litellm the bench's models cost nothing to it, once, at start-up.

    For a model missing from litellm's price map, every call walks a long chain of name
    generalisations to price the response (~0.5 ms of CPU a call here); the gateway does not use
    litellm's prices, so models it does not know are registered as free."""
    unknown = {name for name in served if name not in litellm.model_cost}
    if unknown:
        free = {
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
            "cache_creation_input_token_cost": 0.0,
            "cache_read_input_token_cost": 0.0,
            "mode": "chat",
        }
        litellm.register_model(
            {name: {**free, "litellm_provider": name.split("/", 1)[0]} for name in unknown}
        )


async def warm_up() -> None:
    """The first litellm call in a process costs a few hundred ms of lazy set-up, and the first
    streamed one as much again; pay both now rather than on a user's panel."""
    for stream in (False, True):
        response = await litellm.acompletion(
            model="openai/warm-up",
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="ok",
            stream=stream,
            timeout=5,
            num_retries=0,
            max_retries=0,
        )
        if stream:
            async for _ in response:
                pass

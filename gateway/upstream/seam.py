"""The one seam to the model providers: every call to a model goes out here, through litellm or,
for an OpenAI-compatible provider, sent and read by the gateway itself with litellm building
the request (gateway/upstream/direct.py).

Everything a call needs is passed per call (model, api_base, api_key, timeout) and retries are
switched off at both levels (`num_retries=0` for litellm, `max_retries=0` for the OpenAI SDK it
drives): a panel must never wait out a rate limit, it swaps in a reserve instead. litellm's
exceptions become the gateway's own UpstreamError tree in `failures`, in one place.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from functools import lru_cache
from typing import Any, Protocol

import aiohttp
import litellm  # offline: the process owner set its environment first (gateway/serve/process.py)
import litellm.main

from gateway.upstream import inline, relay
from gateway.upstream.answer import Answer
from gateway.upstream.call import call_model, endpoint_of
from gateway.upstream.capped import CappedResponse
from gateway.upstream.direct import DirectReader, reads_direct
from gateway.upstream.relay import TurnReply
from gateway.upstream.setup_queue import Passage, SetupQueue

litellm.suppress_debug_info = True
litellm.telemetry = False
# No logging callbacks are registered, so nothing receives prompts; (turn_off_message_logging
# would make litellm deep-copy and redact every call's messages for no reader.)

# Providers whose request set-up is CPU work only (a static key, no credential fetch, no file or
# network access before the request), so it may run on the event loop (see upstream/inline.py).
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


__all__ = ["Answer", "LitellmUpstream", "Upstream", "call_model", "endpoint_of"]


class Upstream(Protocol):
    """What the gateway asks of its way out: a panel seat's call (`call`, a whole `Answer`) and a
    route turn's (`open_turn`: the member's reply, or its chunk stream, opened). The app's own is
    `LitellmUpstream`; a test or a benchmark may hand `create_app` another."""

    async def call(
        self,
        params: dict[str, Any],
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        timeout: float,
        *,
        stream: bool = False,
        max_answer_bytes: int | None = None,
        reader: str = "auto",
    ) -> Answer: ...

    async def open_turn(
        self,
        params: dict[str, Any],
        request: dict[str, Any],
        timeout: float,
        *,
        stream: bool,
        max_answer_bytes: int | None = None,
        reader: str = "auto",
    ) -> TurnReply: ...


class LitellmUpstream:
    """The gateway's way to the providers through litellm, opened and closed by the app's
    lifespan.

    - One shared HTTP session (one connection pool) for every seat call: litellm sends through
      it (`shared_session`), with no cap on connections per host beyond the panel sizes.
    - litellm's per-call request set-up runs on the event loop for providers where it is CPU
      work only, instead of a thread hop each way (gateway/upstream/inline.py).
    - Set-ups pass a queue one at a time, in arrival order, until their request leaves
      (gateway/upstream/setup_queue.py); the session's trace hook says when it does.
    - Answers are read and parsed the same way, one at a time in order of arrival, through a
      second queue entered when a response's headers arrive: a thousand answers arriving
      together would otherwise all be ready on the loop at once, and a health check or a new
      client would wait behind every one of them (1000 panels: /healthz up to several
      seconds); through the queue each waits behind at most one.
    - Calls to OpenAI-compatible providers are sent and read by the gateway itself (litellm
      still builds each request; gateway/upstream/direct.py), unless a model's
      `upstream_reader` says `litellm`: they pass neither queue, their set-up and reading
      costing a small fraction of litellm's.
    """

    def __init__(self) -> None:
        self.session: aiohttp.ClientSession | None = None
        self.inline_models: frozenset[str] = frozenset()
        self.setups = SetupQueue()
        self.reading = SetupQueue()
        self.executor: inline.InlineWhere | None = None
        self.direct = DirectReader()

    async def open(self, served: list[str], readers: dict[str, str] | None = None) -> None:
        """*readers*: served model -> its `upstream_reader`; `direct` for a provider litellm
        does not treat as OpenAI-compatible is refused here, naming the model."""
        for model, reader in (readers or {}).items():
            if reader == "direct" and not reads_direct(model, reader):
                raise ValueError(
                    f"upstream_reader: direct for {model}: litellm does not treat its provider "
                    "as OpenAI-compatible; use auto or litellm"
                )
        know_models(served)
        self.inline_models = frozenset(m for m in served if _provider(m) in SETUP_INLINE)
        self.executor = inline.install(asyncio.get_running_loop(), self._is_setup)
        trace = aiohttp.TraceConfig()
        trace.on_request_start.append(_request_leaving)
        trace.on_request_end.append(self._answer_arrived)
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=300),
            cookie_jar=aiohttp.DummyCookieJar(),  # providers never share cookies through us
            trust_env=litellm.aiohttp_trust_env or os.environ.get("AIOHTTP_TRUST_ENV") == "True",
            trace_configs=[trace],
            response_class=CappedResponse,  # answers over their cap stop being read
        )
        await self.direct.open()
        await warm_up()

    async def close(self) -> None:
        await self.direct.close()
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
        stream: bool = False,
        max_answer_bytes: int | None = None,
        reader: str = "auto",
    ) -> Answer:
        """One seat's call, through the queue and the shared session (or read directly)."""
        if _direct(params["model"], reader):
            return await call_model(
                params, messages, sampling, timeout, stream=stream,
                max_answer_bytes=max_answer_bytes, direct=self.direct, reading=self.reading,
            )  # fmt: skip
        if self.session is not None:
            params = {**params, "shared_session": self.session}
        model = params.get("model", "")
        reading: list[Passage] = []
        async with self.setups.passage(model) as passage:
            token, turns = _PASSAGE.set(passage), _READING.set(reading)
            try:
                answer = await call_model(
                    params,
                    messages,
                    sampling,
                    timeout,
                    stream=stream,
                    max_answer_bytes=max_answer_bytes,
                )
            finally:
                _PASSAGE.reset(token)
                _READING.reset(turns)
                for turn in reading:
                    turn.end()
            self.setups.succeeded(model, passage)
            return answer

    async def open_turn(
        self,
        params: dict[str, Any],
        request: dict[str, Any],
        timeout: float,
        *,
        stream: bool,
        max_answer_bytes: int | None = None,
        reader: str = "auto",
    ) -> TurnReply:
        """A route turn's call (gateway/upstream/relay.py), through the shared session (whose
        responses hold the answer to its cap as they are read), or read directly."""
        if stream and _direct(params["model"], reader):
            return await relay.open_turn(
                params, request, timeout, stream=True, max_answer_bytes=max_answer_bytes,
                direct=self.direct,
            )  # fmt: skip
        if self.session is not None:
            params = {**params, "shared_session": self.session}
        return await relay.open_turn(
            params, request, timeout, stream=stream, max_answer_bytes=max_answer_bytes
        )

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


async def _request_leaving(session: Any, context: Any, params: Any) -> None:
    passage = _PASSAGE.get()
    if passage is not None:
        passage.leave()


@lru_cache(maxsize=1024)
def _direct(model: str, reader: str) -> bool:
    return reads_direct(model, reader)


def _provider(model: str) -> str | None:
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

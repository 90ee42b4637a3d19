"""The one seam to the model providers: every call to a model goes out here, read by one of two
siblings, as httpx's transports sit behind its client.

- litellm's reader (gateway/upstream/litellm/): litellm sends and reads the call;
- the direct reader (gateway/upstream/direct/): for an OpenAI-compatible provider, litellm
  builds the request and the gateway sends it and reads the answer itself, at a small fraction
  of litellm's CPU (config `upstream_reader: auto|litellm|direct`, per model or in `gateway`).

The seam picks the reader of each model once, holds every call to its deadline and its answer
to its byte cap (gateway/upstream/capped.py), and maps whatever the reader raised to the
gateway's UpstreamError tree in one place (gateway/upstream/failures.py). Everything a call
needs is passed per call (model, api_base, api_key, timeout) and retries are off at both levels
(`num_retries=0` for litellm, `max_retries=0` for the OpenAI SDK it drives): a panel never waits
out a rate limit, it swaps in a reserve instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from gateway.errors import UpstreamError
from gateway.upstream.answer import Answer, held_to
from gateway.upstream.capped import capped, raw_cap
from gateway.upstream.chunks import TurnStream
from gateway.upstream.direct.reader import DirectReader, reads_direct
from gateway.upstream.failures import call_failed
from gateway.upstream.litellm.reader import LitellmReader
from gateway.upstream.setup_queue import SetupQueue

if TYPE_CHECKING:
    import litellm

    # a route turn's reply: its stream, or (not streamed, litellm's reader) the whole response
    TurnReply = TurnStream | litellm.ModelResponse

__all__ = ["Answer", "Upstream", "UpstreamSeam"]


class Upstream(Protocol):
    """What the gateway asks of its way out: a panel seat's call (`call`, a whole `Answer`) and a
    route turn's (`open_turn`: the member's reply, or its chunk stream, opened). The app's own is
    `UpstreamSeam`; a test or a benchmark may hand `create_app` another."""

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


class UpstreamSeam:
    """Both readers, opened and closed by the app's lifespan, and the choice between them."""

    def __init__(self) -> None:
        self.reading = SetupQueue()  # answers read one at a time, whichever reader reads them
        self.litellm = LitellmReader(self.reading)
        self.direct = DirectReader(self.reading)
        self._direct: dict[tuple[str, str], bool] = {}

    async def open(self, served: list[str], readers: dict[str, str] | None = None) -> None:
        """*readers*: served model -> its `upstream_reader`; `direct` for a provider litellm
        does not treat as OpenAI-compatible is refused here, naming the model."""
        for model, reader in (readers or {}).items():
            if reader == "direct" and not reads_direct(model, reader):
                raise ValueError(
                    f"upstream_reader: direct for {model}: litellm does not treat its provider "
                    "as OpenAI-compatible; use auto or litellm"
                )
        await self.litellm.open(served)
        await self.direct.open()

    async def close(self) -> None:
        await self.direct.close()
        await self.litellm.close()

    def reads_direct(self, model: str, reader: str) -> bool:
        """Is *model* read by the direct reader under *reader*? Worked out once per model."""
        found = self._direct.get((model, reader))
        if found is None:
            found = self._direct[(model, reader)] = reads_direct(model, reader)
        return found

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
        """Ask one model once, as given. Raises an UpstreamError subclass on every kind of
        failure, UpstreamAnswerTooLarge for an answer over *max_answer_bytes* (of UTF-8 text;
        reading stops once the raw response is past `raw_cap` of it)."""
        way = self.direct if self.reads_direct(params["model"], reader) else self.litellm
        limit = max_answer_bytes
        try:
            async with asyncio.timeout(timeout + 1.0):  # each reader's own timeout comes first
                with _capped(limit, stream):
                    answer = await way.call(
                        params, messages, sampling, timeout, stream=stream, limit=limit
                    )
        except UpstreamError:
            raise
        except Exception as exc:  # every reader's failure is mapped there, once
            raise call_failed(exc, timeout, params) from exc
        return held_to(answer, limit)

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
        """A route turn's call (gateway/upstream/relay.py reads its stream): opened, the
        request sent and the reply's headers in. The responses hold the answer to its cap as
        they are read. Raises an UpstreamError."""
        try:
            async with asyncio.timeout(timeout + 1.0):
                with _capped(max_answer_bytes, stream):
                    if stream and self.reads_direct(params["model"], reader):
                        return await self.direct.open_turn(params, request, timeout)
                    return await self.litellm.open_turn(params, request, timeout, stream=stream)
        except UpstreamError:
            raise
        except Exception as exc:
            raise call_failed(exc, timeout, params) from exc


@contextlib.contextmanager
def _capped(limit: int | None, stream: bool) -> Iterator[None]:
    if not limit:
        yield
        return
    with capped(raw_cap(limit, stream), limit, stream):
        yield

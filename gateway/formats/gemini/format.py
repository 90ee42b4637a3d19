"""One Gemini request as a `Format`: the collection is in the path and the stream's framing in
the method and `?alt=`, so a format is made per request, its halves in read.py, render.py and
route.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from starlette.responses import Response

from gateway.config.settings import Config
from gateway.errors import GatewayError
from gateway.formats.gemini import route
from gateway.formats.gemini.hints import camel_keys
from gateway.formats.gemini.read import chat_request, check_fields
from gateway.formats.gemini.render import error_body, render_error, reply_chunk, streamed
from gateway.panel import reply
from gateway.panel.ask import (
    Ask,
    chat_messages,
    nominees_of,
    reply_asked,
    reply_merged,
    shape_asked,
)
from gateway.panel.fanout import SeatStatus
from gateway.panel.run import Event, KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.replies import JSONResponse
from gateway.request.bounds import bounded
from gateway.request.checks import collection_named, sampling_of
from gateway.request.hints import joined
from gateway.route.ask import RouteAsk
from gateway.route.turn import RouteTurn


class GeminiFormat:
    """One Gemini request: *model* from the path, *stream* from the method, *sse* from `alt`."""

    def __init__(self, model: str, *, stream: bool = False, sse: bool = False) -> None:
        self.model = model
        self.stream = stream
        self.sse = sse

    # The body's bound, pure (it may run in the body reader's child process,
    # gateway/request/body.py, which must not import this module: litellm comes with it). The
    # checks of the format's own fields run in `read`, on a body this has made small. (A partial
    # is no descriptor: `self.check` is the partial itself, which pickles by `bounded`'s name.)
    check = partial(bounded, listed="contents")

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
        """A generateContent body (bounded by `check`; the X-Panel-* headers, lower-cased) as an
        Ask."""
        body = camel_keys(body)
        found = check_fields(body)
        collection, merged_by_name = collection_named(self.model)
        request, config_found = chat_request(body)
        messages = chat_messages(request.pop("messages"), config.gateway.max_messages)
        return Ask.of(
            requested_model=self.model,
            collection=collection,
            shape=shape_asked(headers, collection, config),
            nominees=nominees_of(body.get("with"), headers.get("x-panel-with")),
            messages=messages,
            sampling=sampling_of(request),
            stream=self.stream,
            merged=merged_by_name
            or reply_merged(reply_asked(body.get("bench")), collection, config),
            hints=joined(found, config_found),
        )

    async def render_run(self, run: PanelRun) -> Response:
        if self.stream:
            # The 200 waits for the first seat's answer: the Gemini CLI takes an in-stream error
            # for an empty answer and retries it, so a panel no seat answers is a real status.
            events = run.events()
            held: list[Event] = []
            async for event in events:
                if isinstance(event, PanelEnded) and event.error is not None:
                    return self.render_error(event.error)
                if not isinstance(event, KeepAlive):
                    held.append(event)
                if isinstance(event, PanelEnded) or (
                    isinstance(event, SeatFinished) and event.seat.status == SeatStatus.OK
                ):
                    break
            pieces = self._pieces(run, _chained(held, events))
            return streamed(pieces, sse=self.sse, headers=dict(run.headers))
        await run.run()
        error = run.failure()
        if error is not None:
            return self.render_error(error)
        done = run.completion()
        headers = dict(run.headers)
        body = reply_chunk(run, done.text, usage=done.usage)
        return JSONResponse(body, headers=headers)

    def render_error(self, error: GatewayError) -> Response:
        return render_error(error)

    def read_route(
        self, body: dict[str, Any], headers: dict[str, str], collection: str
    ) -> RouteAsk:
        return route.read_route(body, headers, collection, self.model, stream=self.stream)

    async def render_route(self, turn: RouteTurn) -> Response:
        return await route.render_route(turn, sse=self.sse)

    async def _pieces(
        self, run: PanelRun, events: AsyncIterator[Event]
    ) -> AsyncIterator[dict[str, Any]]:
        """The reply's chunks: the header, a section per seat as it finishes, the last with
        `finishReason` and `usageMetadata`; an empty text chunk as a keep-alive."""
        merged = run.ask.merged
        if not merged:
            yield reply_chunk(run, reply.header_line(run.facts) + "\n", last=False)
        async for event in events:
            if isinstance(event, KeepAlive):
                yield reply_chunk(run, "", last=False)
            elif isinstance(event, SeatFinished):
                if not merged:
                    yield reply_chunk(run, reply.section(event.seat) + "\n", last=False)
            elif isinstance(event, PanelEnded):
                if event.completion is None:
                    assert event.error is not None
                    yield error_body(event.error)
                    return
                done = event.completion
                yield reply_chunk(run, done.text if merged else "", usage=done.usage)


async def _chained(held: list[Event], rest: AsyncIterator[Event]) -> AsyncIterator[Event]:
    for event in held:
        yield event
    async for event in rest:
        yield event

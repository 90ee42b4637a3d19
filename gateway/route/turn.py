"""A route turn once a member has it: its reply relayed, and the call record it ends as.

Every member is read as a stream (gateway/route/member.py). A streamed turn relays each chunk as
it comes; a plain one gathers them and replies once the answer is whole. A stream that breaks
after its first piece is continued on the next member (gateway/route/continuation.py): in a
streamed turn from the text the client already has, in a plain one (the client has nothing
yet) by the next member answering whole. Either way the client gets one answer, and the record
keeps it whole, with the member that broke off named among `failed_over`.

The turn is recorded when its reply ends: a plain reply before it is sent, a stream when it
ends, breaks off or the client hangs up (then by a task of its own, so the record never waits
on a client). A turn no member answered is recorded too (gateway/route/refusal.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from gateway.access.secrets import ChunkMask
from gateway.errors import (
    RouteStreamOverTime,
    UpstreamAnswerTooLarge,
    UpstreamBrokenStream,
    UpstreamError,
)
from gateway.request.failure import FailureClass, classify
from gateway.request.hints import header
from gateway.route import continuation
from gateway.route.answer import Answer
from gateway.route.ask import RouteAsk
from gateway.route.keepalive import Quiet, with_keepalive
from gateway.route.member import Failure, Opened, Plan, next_opened
from gateway.route.refusal import refusal
from gateway.route.usage import add_earlier, broken_call
from gateway.route.watch import Watch
from gateway.runtime import Runtime
from gateway.state.conversations import Key
from gateway.store.rows import CallRow
from gateway.tokens import counts
from gateway.upstream.chunks import Chunk
from gateway.upstream.params import takes_prefill
from gateway.upstream.relay import chunks_of, close
from gateway.upstream.translate.chat import whole_response

_OWN_TASKS: set[asyncio.Task[Any]] = set()


@dataclass
class RouteTurn:
    """One turn, given to a member: its chunks (the first already held), the members left to
    continue it, and what it is recorded as once it ends."""

    runtime: Runtime
    ask: RouteAsk
    conversation: str
    turn: int
    alias: str  # the member that answered (a streamed turn: began the answer)
    shape: str
    plan: Plan  # the members left, should the stream break
    began: float
    key: Key
    members: tuple[str, ...]
    opened: Opened
    response: Any = None  # plain: the whole reply, assembled
    recorded: bool = False
    on_end: list[Callable[[], None]] = field(default_factory=list)
    given: int = 0  # held chunks handed on so far
    continued_by: str | None = None  # the member that finished a streamed answer
    spent: list[tuple[int, int]] = field(default_factory=list)  # broken calls' tokens
    began_at: int = 0  # characters of text sent when the member being read began

    def __post_init__(self) -> None:
        self.stream, self.held = self.opened.stream, self.opened.held
        self.first_token_s, self.dropped = self.opened.first_token_s, self.opened.dropped
        self.member = self.alias  # the member being read now
        self.answer = Answer(self.runtime.config.gateway.max_answer_bytes)

    @property
    def failures(self) -> list[Failure]:
        return self.plan.failures

    @property
    def call(self) -> str:
        return f"{self.conversation}.{self.turn}"

    @property
    def headers(self) -> dict[str, str]:
        named = {"X-Bench-Conversation": self.conversation, "X-Bench-Model": self.alias}
        return {**named, **header(self.dropped)}

    @property
    def bench(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "call": self.call,
            "alias": self.alias,
            "turn": self.turn,
            "collection": self.ask.collection,
            "failed_over": [f.view() for f in self.failures],
            "continued_by": self.continued_by,
        }

    @overload
    def relayed(self, *, batched: Literal[False] = False) -> AsyncIterator[Chunk | Quiet]: ...
    @overload
    def relayed(self, *, batched: Literal[True]) -> AsyncIterator[list[Chunk] | Quiet]: ...

    def relayed(self, *, batched: bool = False) -> AsyncIterator[Any]:
        """The chunks, with a `Quiet` whenever the member is silent for the keep-alive time.
        The held chunks are handed on at once (no task hop), so the first text leaves in the
        same write as the response's headers (gateway/serve/connection.py). *batched*: lists
        of the chunks ready at once (what one read from the member brought), to be sent in
        one write."""
        return with_keepalive(
            self.chunks(),
            self.runtime.config.gateway.keepalive_s,
            self.in_hand,
            ready=self.upstream_ready,
            batched=batched,
        )

    def upstream_ready(self) -> bool:
        """Is the member's next chunk read already (the direct reader says so)?"""
        ready = getattr(self.stream, "in_hand", None)
        return bool(ready()) if callable(ready) else False

    def in_hand(self) -> bool:
        return self.given < len(self.held)

    async def chunks(self, *, relayed: bool = True) -> AsyncIterator[Chunk]:
        """The reply's chunks as they come, a broken stream continued, recorded when it ends
        (or breaks off, or the client hangs up: then the record is written by a task of its
        own). *relayed*: the client sees them as they come (else a plain turn gathers them)."""
        error: str | None = None
        failure: FailureClass | None = None  # a client hanging up is no failure of the model's
        repeat: continuation.Repeat | None = None
        settings = self.runtime.config.gateway
        watch = self.watch = Watch(settings.stall_s, settings.route_stream_max_s)
        masked = ChunkMask(self.runtime.secrets)  # an echoed secret, even split across chunks
        read = 0
        try:
            for chunk in self.held:
                self.answer.read(masked.chunk(chunk))
                self.given += 1
                yield chunk
            while True:
                try:
                    async for chunk in watch.chunks(
                        chunks_of(self.stream, settings.seat_timeout_s)
                    ):
                        chunk = masked.chunk(chunk)
                        passed = chunk if repeat is None else self._continuing(chunk, repeat)
                        if passed is not None:
                            self.answer.read(passed)
                            yield passed
                        read += 1
                        if read % 64 == 0:  # chunks already in hand never keep the loop to one
                            await asyncio.sleep(0)
                    if self.answer.finish_reason is None:
                        raise UpstreamBrokenStream("the stream ended before its finish")
                    break
                except UpstreamError as exc:
                    opened = await self._continue(exc, relayed)
                # what the broken stream's mask held back was never sent: the next starts afresh
                masked = ChunkMask(self.runtime.secrets)
                repeat = continuation.Repeat(self.answer.text) if relayed else None
                for chunk in opened.held:
                    chunk = masked.chunk(chunk)
                    passed = chunk if repeat is None else self._continuing(chunk, repeat)
                    if passed is not None:
                        self.answer.read(passed)
                        yield passed
        except UpstreamError as exc:
            error = self.runtime.scrub_error(exc.message) or exc.kind
            failure = classify(exc.status, error, exc.kind)
            raise
        except BaseException:
            error = "the client hung up before the turn ended"
            raise
        finally:
            watch.close()
            row = self._row("error" if error else "ok", error, failure)
            self._ended()
            await close(self.stream)
            if relayed:
                task = asyncio.get_running_loop().create_task(self._record(row))
                _OWN_TASKS.add(task)
                task.add_done_callback(_OWN_TASKS.discard)
            else:
                await self._record(row)

    async def _continue(self, exc: UpstreamError, relayed: bool) -> Opened:
        """The next member that takes the turn on from where *exc* broke it; raise when it
        cannot be continued (a tool call half sent, an answer over its limit) or nobody can."""
        why = self.runtime.scrub_error(exc.message) or exc.kind
        if isinstance(exc, RouteStreamOverTime) or (
            relayed and isinstance(exc, UpstreamAnswerTooLarge)
        ):
            raise exc  # the client's bounds, not the member's fault: no one would do better
        if relayed and self.answer.calls:
            raise UpstreamBrokenStream(f"{why} (inside a tool call, which is never continued)")
        sent = self.answer.text if relayed else ""
        at = len(self.failures)

        def forms(alias: str) -> list[dict[str, Any]]:
            model = self.runtime.config.catalog.model(alias)
            prefill = model is not None and (
                model.prefill if model.prefill is not None else takes_prefill(model.served)
            )
            return continuation.forms(self.ask.request, sent, prefill)

        try:
            async with asyncio.timeout(self.watch.left()):
                opened = await next_opened(self.runtime, self.ask, self.plan, forms)
        except TimeoutError:
            raise self.watch.over() from exc
        if opened is None:
            named = "; ".join(f"{f.alias} {f.status}: {f.error}" for f in self.failures[at:])
            self.failures.insert(at, Failure(self.member, "error", f"broke off: {why}", exc.kind))
            tried = f"; no member could continue it ({named})" if named else ""
            raise UpstreamBrokenStream(f"{why}{tried}") from exc
        how = "continued by" if relayed else "handed to"
        broke = Failure(self.member, "error", f"{why}; {how} {opened.alias}", exc.kind)
        self.failures.insert(at, broke)
        await close(self.stream)
        self.stream, self.held, self.member = opened.stream, opened.held, opened.alias
        if relayed:
            self.continued_by = opened.alias
            spent = broken_call(self.answer.usage, self.ask.messages, sent, self.began_at)
            self.spent.append(spent)
            self.answer.usage, self.began_at = None, len(sent)  # the next call's own, summed
        else:  # nothing was sent: the answer is the new member's alone
            self.answer.forget()
            self.alias, self.dropped = opened.alias, opened.dropped
        self.runtime.live.settle_turn(self.key, self.members, opened.alias)
        return opened

    def _continuing(self, chunk: Chunk, repeat: continuation.Repeat) -> Chunk | None:
        """A continuing member's chunk as the client gets it: its text less a repeat of what
        was sent, in the first member's id; None when nothing of it is left to send."""
        kept = False
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                delta.content = repeat.cut(delta.content)
            if choice.finish_reason and (tail := repeat.rest()):
                delta.content = (delta.content or "") + tail
            if delta.role:
                delta.role = None
            kept = kept or bool(delta.content or delta.tool_calls)
            kept = kept or bool(choice.finish_reason)
        reported = chunk.usage
        if not kept and not reported:
            return None
        if reported and self.spent and reported is not self.answer.usage:
            add_earlier(reported, self.spent)  # every call that made the answer
        first = self.answer.first
        if first is not None:
            chunk.id, chunk.created = first.id, first.created
        return chunk

    async def finish_plain(self) -> None:
        """Read the whole reply (a broken stream handed on, an echoed provider secret masked as
        it comes), then assemble it: a plain turn's reply. Raise the refusal that names every
        member when none could answer."""
        try:
            async for _ in self.chunks(relayed=False):
                pass
        except UpstreamError as exc:
            if isinstance(exc, RouteStreamOverTime):
                self.failures.append(Failure(self.member, "timeout", exc.message, exc.kind))
            raise refusal(self.runtime, self.conversation, self.turn, self.failures) from exc
        got = self.answer
        self.response = whole_response(
            got.first, got.text, "".join(got.reasoning), got.whole_calls(), got.finish_reason,
            got.usage,
        )  # fmt: skip

    def _ended(self) -> None:
        for callback in self.on_end:
            callback()
        self.on_end.clear()

    def _row(self, status: str, error: str | None, failure: FailureClass | None) -> CallRow:
        model = self.runtime.config.catalog.model(self.alias)
        assert model is not None
        now = self.runtime.clock()
        tokens_in, tokens_out = counts(self.answer.usage, self.alias)
        return CallRow(
            id=self.call,
            panel_id=self.conversation,
            seat=f"turn{self.turn}",
            alias=self.alias,
            model=model.served,
            connection=model.connection,
            shape=self.shape,
            status=status,
            error=error,
            error_class=None if error is None else "stream",
            failure=failure,
            seconds=round(time.monotonic() - self.began, 3),
            first_token_s=self.first_token_s,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            answer=self.answer.recorded(),
            replaces=None,
            replaced_by=None,
            started=now - (time.monotonic() - self.began),
            finished=now,
            failed_over=[f.view() for f in self.failures],
            dropped=list(self.dropped),
        )

    async def _record(self, row: CallRow) -> None:
        if self.recorded:
            return
        self.recorded = True
        if row["status"] == "ok":
            self.runtime.figures.answered(self.alias)
        await self.runtime.live.flush("turn end")
        await self.runtime.store.add_call(row)

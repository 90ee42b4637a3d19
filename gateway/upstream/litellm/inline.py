"""An event loop's default executor that runs chosen short, CPU-only jobs where they are asked.

Why: `litellm.acompletion` hands each call's request set-up (a synchronous `completion()` that
builds the request and returns a coroutine) to the loop's default thread pool. For the
OpenAI-style providers a bench uses, that set-up is pure CPU work of a millisecond or two: in a
thread it only fights the event loop for the GIL, adds two thread hops per seat, and under a
burst of panels queues thousands of jobs behind a handful of threads. Run on the loop instead, it
costs what it costs and nothing more. Every other job (DNS look-ups, anything that may block)
still goes to threads, so a predicate decides, job by job, and says no when unsure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

Predicate = Callable[[Callable[..., Any]], bool]


class InlineWhere(ThreadPoolExecutor):
    """A thread pool (asyncio requires one) that runs the jobs *inline* chooses at once."""

    def __init__(self, inline: Predicate, max_workers: int | None = None) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="bench-io")
        self._inline = inline
        self.inlined = 0  # jobs run at once, for the curious (tests, benchmarks)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if args or kwargs or not self._inline(fn):
            return super().submit(fn, *args, **kwargs)
        done: Future[Any] = Future()
        self.inlined += 1
        try:
            done.set_result(fn())
        except BaseException as exc:  # handed back to the awaiting caller, as a thread would
            done.set_exception(exc)
        return done


def install(loop: asyncio.AbstractEventLoop, inline: Predicate) -> InlineWhere:
    executor = InlineWhere(inline)
    loop.set_default_executor(executor)
    return executor

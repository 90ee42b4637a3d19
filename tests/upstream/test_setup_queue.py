"""The set-up queue and the inline executor: set-ups one at a time in arrival order, released when
their request leaves; litellm's set-up run on the loop, everything else still in threads."""

from __future__ import annotations

import asyncio
import threading

from gateway.upstream.litellm.inline import InlineWhere
from gateway.upstream.setup_queue import SetupQueue


def test_set_ups_pass_the_gate_one_at_a_time_in_arrival_order():
    async def main():
        queue, events = SetupQueue(hold_s=5), []

        async def call(name: str):
            async with queue.passage("m") as passage:
                events.append(f"{name} in")
                await asyncio.sleep(0.01)  # set-up work with an await in it
                events.append(f"{name} left")
                passage.leave()
                await asyncio.sleep(0.05)  # the answer is on its way: the queue is already open
            events.append(f"{name} answered")

        await asyncio.gather(*(call(n) for n in "abc"))
        return events

    events = asyncio.run(main())
    assert events[:6] == ["a in", "a left", "b in", "b left", "c in", "c left"]
    assert events.index("a answered") > events.index("c in")  # the queue did not wait for answers


def test_a_set_up_that_never_says_it_left_holds_the_gate_only_hold_s():
    async def main():
        queue = SetupQueue(hold_s=0.05)
        order = []

        async def silent():
            async with queue.passage("m"):
                order.append("silent in")
                await asyncio.sleep(1.0)

        async def next_one():
            await asyncio.sleep(0.001)
            async with queue.passage("m") as passage:
                order.append("next in")
                passage.leave()

        loop = asyncio.get_running_loop()
        began = loop.time()
        slow = asyncio.create_task(silent())
        await next_one()
        waited = loop.time() - began
        slow.cancel()
        return order, waited

    order, waited = asyncio.run(main())
    assert order == ["silent in", "next in"]
    assert waited < 0.9  # released by hold_s, not by the end of the silent call


def test_a_model_that_succeeds_in_silence_is_let_through_without_queueing():
    async def main():
        queue = SetupQueue(hold_s=5)
        async with queue.passage("quiet") as passage:
            pass
        queue.succeeded("quiet", passage)
        async with queue.passage("loud") as loud:
            loud.leave()
        queue.succeeded("loud", loud)
        async with queue.passage("loud"):  # holds the queue...
            async with queue.passage("quiet"):  # ...which a silent model does not queue for
                return queue.silent

    assert asyncio.run(main()) == {"quiet"}


def test_chosen_jobs_run_on_the_calling_thread_and_others_in_a_worker_thread():
    def where() -> str:
        return threading.current_thread().name

    async def main():
        loop = asyncio.get_running_loop()
        executor = InlineWhere(lambda fn: fn is where)
        loop.set_default_executor(executor)
        here = await loop.run_in_executor(None, where)
        there = await loop.run_in_executor(None, lambda: where())
        return here, there, threading.current_thread().name, executor.inlined

    here, there, loop_thread, inlined = asyncio.run(main())
    assert here == loop_thread and there != loop_thread
    assert inlined == 1


def test_an_inline_job_that_raises_hands_the_error_to_its_awaiter():
    def boom():
        raise ValueError("set-up failed")

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(InlineWhere(lambda fn: fn is boom))
        try:
            await loop.run_in_executor(None, boom)
        except ValueError as exc:
            return str(exc)

    assert asyncio.run(main()) == "set-up failed"


def test_a_waiting_set_up_is_never_overtaken_by_a_later_arrival():
    async def main():
        queue, order = SetupQueue(hold_s=5), []
        holding = queue.passage("m")
        first = await holding.__aenter__()

        queued = asyncio.create_task(_call(queue, order, "queued"))
        await asyncio.sleep(0)  # it is waiting for the turn now
        first.leave()  # the turn goes to the waiter...
        late = asyncio.create_task(_call(queue, order, "late"))  # ...one arriving now is after it
        await asyncio.gather(queued, late)
        await holding.__aexit__(None, None, None)
        return order

    assert asyncio.run(main()) == ["queued", "late"]


def test_a_waiter_cancelled_in_the_queue_does_not_block_the_ones_behind_it():
    async def main():
        queue, order = SetupQueue(hold_s=5), []
        holding = queue.passage("m")
        first = await holding.__aenter__()

        gone = asyncio.create_task(_call(queue, order, "gone"))
        kept = asyncio.create_task(_call(queue, order, "kept"))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        first.leave()
        await asyncio.wait_for(kept, 1)
        await holding.__aexit__(None, None, None)
        return order

    assert asyncio.run(main()) == ["kept"]


async def _call(queue: SetupQueue, order: list[str], name: str) -> None:
    """A call whose set-up leaves at once, noting when it got its turn."""
    async with queue.passage("m") as passage:
        order.append(name)
        passage.leave()

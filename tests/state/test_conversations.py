"""One key's flood of new route conversations evicts only its own (attack N35): another key's
conversation keeps its member, its id and its turn numbering, on the board and in Redis.

The table holds `BUCKETS` conversations; the flood here is three times that, through the live
state a route turn begins in (gateway/state), on a private board and on the test's own Redis.
"""

from __future__ import annotations

from gateway.access.keys import EVERYONE
from gateway.board import Board
from gateway.runtime import Runtime
from gateway.state.conversations import BUCKETS, Conversations, Key, cells_of
from tests.helpers.clocks import ManualClock
from tests.helpers.replicas import replicas, run

MEMBERS = ("alpha", "gamma", "delta")
KEPT: Key = ("trio", "key-a", "", "plan the trip")


def flood(name: str, count: int) -> list[Key]:
    return [("trio", name, "", f"task {n}") for n in range(count)]


def test_a_flood_of_new_conversations_evicts_only_the_flooding_keys_own_on_the_board():
    clock = ManualClock()
    table = Conversations(Board.private(), clock.now)
    first = table.begin(KEPT, MEMBERS)
    table.settle(KEPT, MEMBERS, "gamma")
    for key in flood("key-b", 3 * BUCKETS):
        clock.advance(0.001)
        assert table.begin(key, MEMBERS, fresh=True).new
    later = table.begin(KEPT, MEMBERS)
    assert (later.conversation, later.turn, later.member, later.new) == (
        first.conversation, 2, "gamma", False,
    )  # fmt: skip
    recent = [table.begin(key, MEMBERS) for key in flood("key-b", 3 * BUCKETS)[-50:]]
    assert all(not turn.new for turn in recent)  # the flood's newest ones are kept


def test_a_key_holding_more_of_a_set_gives_way_to_a_newcomer_until_they_are_even():
    clock = ManualClock()
    table = Conversations(Board.private(), clock.now)
    crowd = [k for k in flood("key-b", 4000) if cells_of(k) == cells_of(KEPT)]
    for key in crowd[:8]:  # key-b holds the whole set
        clock.advance(1)
        table.begin(key, MEMBERS)
    clock.advance(1)
    table.begin(KEPT, MEMBERS)  # key-a gets a cell: key-b's oldest
    assert table.begin(crowd[0], MEMBERS).new  # that one was evicted
    assert not table.begin(KEPT, MEMBERS).new


def test_a_flood_through_redis_evicts_only_the_flooding_keys_own(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        first = await a.live.begin_turn(KEPT, MEMBERS, EVERYONE)
        a.live.settle_turn(KEPT, MEMBERS, "gamma")
        await a.live.flush("turn end")
        for key in flood("key-b", 3 * BUCKETS):
            clock.advance(0.001)
            assert (await b.live.begin_turn(key, MEMBERS, EVERYONE, fresh=True)).new
        later = await a.live.begin_turn(KEPT, MEMBERS, EVERYONE)
        assert (later.conversation, later.turn, later.member, later.new) == (
            first.conversation, 2, "gamma", False,
        )  # fmt: skip

    run(replicas(2, redis_url, tmp_path, clock), body)

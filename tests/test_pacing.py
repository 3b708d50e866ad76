"""handlers/pacing.py on a fake clock: the window edges exactly as a sender meets them. The
pacer takes its clock and sleep as arguments; here time moves only when the pacer sleeps (or
the test moves it), so "waits exactly until the window's end" is an exact assertion, not a
timing one."""

from __future__ import annotations

import asyncio

from handlers.pacing import ConversationPacer, KeyedLocks, Pacer


class FakeTime:
    """A monotonic clock that moves only when someone sleeps on it (or the test sets it)."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now
        self.waits: list[float] = []  # every sleep the pacer asked for, in order

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)

    def pacer(self) -> Pacer:
        return Pacer(clock=self.clock, sleep=self.sleep)


async def test_n_calls_go_through_and_the_next_waits_exactly_until_the_window_ends():
    t = FakeTime(100.0)
    pacer = t.pacer()
    for _ in range(3):
        await pacer.acquire((("chat:C1", 3, 10.0),))
    assert t.waits == []  # the first three are not held at all
    t.now = 104.0
    await pacer.acquire((("chat:C1", 3, 10.0),))
    assert t.waits == [6.0]  # the 4th waits until the first call leaves the window, at 110
    assert t.now == 110.0


async def test_at_the_window_edge_calls_go_through_and_the_window_starts_again():
    t = FakeTime(100.0)
    pacer = t.pacer()
    for _ in range(2):
        await pacer.acquire((("chat:C1", 2, 10.0),))
    t.now = 110.0  # exactly `per` later: the first two have left the window
    for _ in range(2):
        await pacer.acquire((("chat:C1", 2, 10.0),))
    assert t.waits == []
    await pacer.acquire((("chat:C1", 2, 10.0),))  # the window is full again, from 110
    assert t.waits == [10.0]


async def test_just_before_the_edge_the_call_still_waits_for_the_rest():
    t = FakeTime(100.0)
    pacer = t.pacer()
    await pacer.acquire((("chat:C1", 1, 8.0),))
    t.now = 107.5
    await pacer.acquire((("chat:C1", 1, 8.0),))
    assert t.waits == [0.5]


async def test_a_call_under_several_limits_waits_for_the_one_that_frees_last():
    t = FakeTime(0.0)
    pacer = t.pacer()
    await pacer.acquire((("chat:C1", 1, 5.0),))
    await pacer.acquire((("app", 1, 8.0),))
    t.now = 1.0
    await pacer.acquire((("chat:C1", 1, 5.0), ("app", 1, 8.0)))
    assert t.waits == [7.0]  # not 4: the app-wide window is full until 8
    # and the call was recorded against both: each is full again from 8
    await pacer.acquire((("chat:C1", 1, 5.0),))
    await pacer.acquire((("app", 1, 8.0),))
    assert t.waits == [7.0, 5.0, 3.0]


async def test_keys_are_independent():
    t = FakeTime()
    pacer = t.pacer()
    await pacer.acquire((("chat:C1", 1, 10.0),))
    await pacer.acquire((("chat:C2", 1, 10.0),))
    await pacer.acquire((("msg:C1", 1, 10.0),))
    assert t.waits == []
    await pacer.acquire((("chat:C1", 1, 10.0),))
    assert t.waits == [10.0]


async def test_a_conversation_is_paced_on_its_own_key_and_its_extra_limits():
    t = FakeTime(0.0)
    windows = t.pacer()
    chats = ConversationPacer("chat", 2, 5.0, windows=windows)
    messages = ConversationPacer("msg", 1, 5.0, windows=windows)
    await chats.wait_turn("C1")
    await chats.wait_turn("C1")
    await chats.wait_turn("C2")  # another chat: its own window
    await messages.wait_turn("C1")  # same id, another kind of limit: its own window
    assert t.waits == []
    await chats.wait_turn("C1")
    assert t.waits == [5.0]
    await chats.wait_turn("C3", ("app", 1, 9.0))
    await chats.wait_turn("C4", ("app", 1, 9.0))  # C4 has room, the app-wide limit has not
    assert t.waits == [5.0, 9.0]


async def test_a_conversation_pacer_without_shared_windows_keeps_its_own():
    pacer = ConversationPacer("channel", 1, 3600.0)
    await pacer.wait_turn("C1")
    second = asyncio.create_task(pacer.wait_turn("C1"))
    for _ in range(3):
        await asyncio.sleep(0)
    assert not second.done()  # an hour to wait: held
    second.cancel()


async def test_sends_to_one_conversation_go_out_in_order_while_they_wait_their_turn():
    t = FakeTime(0.0)
    pacer = ConversationPacer("chat", 1, 2.0, windows=t.pacer())
    sent: list[tuple[int, float]] = []

    async def send(i: int) -> None:
        async with pacer.lock("C1"):
            await pacer.wait_turn("C1")
            sent.append((i, t.now))

    await asyncio.gather(*(send(i) for i in range(4)))
    assert sent == [(0, 0.0), (1, 2.0), (2, 4.0), (3, 6.0)]


async def test_a_busy_conversation_stays_limited_when_many_others_come_and_go():
    """Past 5000 keys the pacer forgets idle ones; a conversation used a moment ago is not idle."""
    t = FakeTime(0.0)
    pacer = t.pacer()
    await pacer.acquire((("chat:busy", 1, 30.0),))
    t.now = 20.0
    for i in range(5001):
        await pacer.acquire(((f"chat:{i}", 1, 1.0),))
    assert t.waits == []
    await pacer.acquire((("chat:busy", 1, 30.0),))
    assert t.waits == [10.0]


async def test_many_conversations_do_not_hold_up_each_other_after_forgetting():
    t = FakeTime(0.0)
    pacer = t.pacer()
    for i in range(5001):
        await pacer.acquire(((f"chat:{i}", 1, 1.0),))
    t.now = 61.0
    for i in range(5001):  # every key forgotten or slid: none waits
        await pacer.acquire(((f"chat:{i}", 1, 1.0),))
    assert t.waits == []


async def test_a_held_conversation_lock_survives_when_many_others_come_and_go():
    """Past 2000 keys idle locks are forgotten; a held one must not be (a new lock for the same
    conversation would let a send overtake the one in progress)."""
    locks = KeyedLocks()
    held = locks.get("held")
    async with held:
        for i in range(2002):
            locks.get(str(i))
        assert locks.get("held") is held


async def test_the_pacer_forgets_conversations_idle_for_over_a_minute_once_it_knows_5000():
    """A long-running bot must not remember every chat it ever wrote to."""
    t = FakeTime(100.0)
    pacer = t.pacer()
    for i in range(5000):
        await pacer.acquire(((f"chat:{i}", 1, 1.0),))
    t.now = 200.0
    await pacer.acquire((("chat:0", 1, 1.0),))
    assert len(pacer) == 5000  # 5000 known: nothing forgotten yet
    t.now = 160.0 + 100.0  # 5001 known, chat:0 used exactly 60 s ago: kept, the rest forgotten
    await pacer.acquire((("chat:new", 1, 1.0),))
    assert len(pacer) == 5001 - 4999
    t2 = FakeTime(100.0)
    pacer = t2.pacer()
    for i in range(5001):
        await pacer.acquire(((f"chat:{i}", 1, 1.0),))
    t2.now = 160.0  # exactly a minute: idle, but not *over* a minute
    await pacer.acquire((("chat:new", 1, 1.0),))
    assert len(pacer) == 5002
    t2.now = 160.5
    await pacer.acquire((("chat:newer", 1, 1.0),))
    assert len(pacer) == 2


def test_free_locks_are_dropped_once_more_than_2000_are_kept():
    locks = KeyedLocks()
    for i in range(2000):
        locks.get(str(i))
    locks.get("0")
    assert len(locks) == 2000
    locks.get("new")
    assert len(locks) == 2001
    locks.get("newer")  # past 2000: every free lock is dropped first
    assert len(locks) == 1

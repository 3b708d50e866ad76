"""handlers/pacing.py, the pacing both platforms share: a conversation's sends keep their order,
and no window lets more than n calls through per `per` seconds. (Lower bounds only: a slow
machine can make the waits longer, never shorter.)"""

from __future__ import annotations

import asyncio
import time

from handlers.pacing import ConversationPacer, KeyedLocks, Pacer


async def test_sends_to_one_conversation_keep_the_order_they_asked_in():
    pacer = ConversationPacer("chat", 100, 1.0)
    sent: list[int] = []
    arrived: list[int] = []

    async def send(i: int) -> None:
        arrived.append(i)
        async with pacer.lock("C1"):
            await pacer.wait_turn("C1")
            await asyncio.sleep(0.001 * (10 - i))  # later ones would finish first if not held in order
            sent.append(i)

    await asyncio.gather(*(send(i) for i in range(10)))
    assert sent == arrived


async def test_a_window_lets_n_calls_through_then_waits_for_it_to_slide():
    pacer = Pacer()
    asked, granted = [], []
    for _ in range(7):
        asked.append(time.monotonic())
        await pacer.acquire((("chat:C1", 3, 0.2),))
        granted.append(time.monotonic())
    # The 4th call waits until the 1st has left the window, and so on. Measured from when the
    # earlier call was asked: a busy machine may return from an acquire late, which made the gap
    # between two returns 0.197 s although the pacer kept its window.
    for i in range(3, 7):
        assert granted[i] - asked[i - 3] >= 0.2 - 1e-3


async def test_every_limit_of_a_call_is_honoured_and_keys_are_independent():
    pacer = Pacer()

    async def settled(limits) -> bool:
        """Whether an acquire goes through without waiting (it finishes within a loop turn)."""
        task = asyncio.create_task(pacer.acquire(limits))
        for _ in range(3):
            await asyncio.sleep(0)
        done = task.done()
        task.cancel()
        return done

    assert await settled((("chat:C1", 2, 10.0), ("app", 3, 10.0)))
    assert await settled((("chat:C1", 2, 10.0), ("app", 3, 10.0)))
    assert not await settled((("chat:C1", 2, 10.0), ("app", 3, 10.0)))  # C1's window is full
    assert await settled((("chat:C2", 2, 10.0), ("app", 3, 10.0)))  # another conversation goes through…
    assert not await settled((("chat:C3", 2, 10.0), ("app", 3, 10.0)))  # …until the app-wide limit is reached


def test_keyed_locks_are_one_per_key():
    locks = KeyedLocks()
    assert locks.get("a") is locks.get("a") and locks.get("a") is not locks.get("b")

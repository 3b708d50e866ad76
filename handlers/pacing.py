"""Pacing, written once for every platform: a FIFO lock per conversation (messages to one place
go out in the order they were asked for) and sliding-window rate limits (at most n calls per
`per` seconds for a key: a chat, a message, a card, the whole app).

Single event loop: checking and recording a window happen without an await in between, so no
lock is needed for the windows themselves.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

Limit = tuple[str, int, float]  # (key, at most n calls, per seconds)


class Pacer:
    """Sliding-window limits: at most n calls per `per` seconds for each key.

    `clock` and `sleep` default to the real monotonic clock and asyncio.sleep; tests pass a
    fake pair so the window edges can be checked exactly."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    ) -> None:
        self._windows: dict[str, deque] = {}
        self._clock = clock
        self._sleep = sleep

    async def acquire(self, limits) -> None:
        """Wait until every limit has room, then record one call against each."""
        while True:
            now = self._clock()
            wait = 0.0
            for key, n, per in limits:
                window = self._windows.setdefault(key, deque())
                while window and now - window[0] >= per:
                    window.popleft()
                if len(window) >= n:
                    wait = max(wait, per - (now - window[0]))
            if wait <= 0:
                for key, _n, _per in limits:
                    self._windows[key].append(now)
                self._prune(now)
                return
            await self._sleep(wait)

    def __len__(self) -> int:
        """How many keys it remembers: bounded, since idle keys are forgotten past 5000."""
        return len(self._windows)

    def _prune(self, now: float) -> None:
        if len(self._windows) > 5000:
            for key in [k for k, w in self._windows.items() if not w or now - w[-1] > 60]:
                del self._windows[key]


class KeyedLocks:
    """One asyncio.Lock per key (a chat, a message): keeps sends to one place in order
    (asyncio.Lock wakes its waiters first come, first served)."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def __len__(self) -> int:
        """How many locks it keeps: bounded, since free ones are dropped past 2000."""
        return len(self._locks)

    def get(self, key: str) -> asyncio.Lock:
        if len(self._locks) > 2000:
            for k in [k for k, lock in self._locks.items() if not lock.locked()]:
                del self._locks[k]
        return self._locks.setdefault(key, asyncio.Lock())


class ConversationPacer:
    """Per conversation (a channel, a chat, a message): its lock, for order, and its rate, at
    most n calls per `per` seconds. The windows may be shared with app-wide limits so that one
    `acquire` waits for all of them at once."""

    def __init__(self, prefix: str, n: int, per: float, windows: Pacer | None = None):
        self.prefix = prefix
        self.n = n
        self.per = per
        self.windows = windows if windows is not None else Pacer()  # an empty Pacer is falsy (len 0)
        self.locks = KeyedLocks()

    def lock(self, key: str) -> asyncio.Lock:
        return self.locks.get(key)

    def limits(self, key: str) -> tuple[Limit, ...]:
        return ((f"{self.prefix}:{key}", self.n, self.per),)

    async def wait_turn(self, key: str, *also: Limit) -> None:
        """Call with the conversation's lock held: wait for room in its window (and `also`)."""
        await self.windows.acquire(self.limits(key) + tuple(also))

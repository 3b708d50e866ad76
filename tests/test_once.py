"""The run-once machinery watches and alerts share (bot/delivery/once.py), on a real Redis: a run
holds its lease as long as it works (renewed, so a slow run is never taken over), leaves nothing
running behind it, says "busy" when another run holds the lease, and a failing run is retried
with growing delays, then closed once, for good."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.core.models import BotError, RetryLater
from bot.delivery.once import run_once


def once(store, work, **more):
    values = dict(
        lock=store.k("test", "lock"),
        busy="another run holds it",
        done_key=store.k("test", "done"),
        attempts_key=store.k("test", "attempts"),
        ttl=600,
        lease=1,
        retry_after=10.0,
        now=lambda: "2026-01-29T10:00:00+08:00",
        what="the test's run",
    )
    values.update(more)
    return run_once(store, work, **values)


async def test_a_slow_run_keeps_its_lease_and_releases_it_when_done(store):
    lock = store.k("test", "lock")
    took_over: list[bool] = []

    async def slow() -> str:
        for _ in range(5):  # 2.5 s: more than twice the 1 s lease
            await asyncio.sleep(0.5)
            took_over.append(await store.lease(lock, "someone-else", 1))
        return "worked"

    assert await once(store, slow) == "worked"
    assert took_over == [False] * 5  # renewed all along: never free for another runner
    assert await store.lease(lock, "someone-else", 1)  # released at the end
    await asyncio.sleep(0)
    left = [t for t in asyncio.all_tasks() if "keep_lease" in repr(t.get_coro()) and not t.done()]
    assert left == []  # the keeper stopped with the run


async def test_a_held_lease_is_busy_and_a_done_run_is_not_run_again(store):
    ran: list[int] = []

    async def work() -> str:
        ran.append(1)
        return "worked"

    assert await store.lease(store.k("test", "lock"), "someone-else", 2)
    with pytest.raises(RetryLater) as busy:
        await once(store, work, lease=2)
    assert str(busy.value) == "another run holds it" and busy.value.delay == 1.0  # half the lease
    await store.release(store.k("test", "lock"), "someone-else")
    assert await once(store, work) == "worked"
    assert await once(store, work) == "already done" and ran == [1]
    assert await store.get_json(store.k("test", "done")) == {"at": "2026-01-29T10:00:00+08:00"}


@pytest.mark.parametrize("error", [ValueError("boom"), BotError("the branch is gone")])
async def test_a_failing_run_is_retried_twice_then_closed_for_good(store, error, caplog):
    async def failing() -> str:
        raise error

    delays = []
    for _ in range(2):
        with pytest.raises(RetryLater) as retry:
            await once(store, failing)
        assert str(retry.value) == f"failed ({error}); will retry"
        delays.append(retry.value.delay)
    assert delays == [20.0, 40.0]  # retry_after × 2, × 4
    assert await once(store, failing) == f"gave up ({error})"
    assert await store.get_json(store.k("test", "done")) == {"failed": str(error)}
    assert await once(store, failing) == "already done"
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR and "the test's run failed" in r.getMessage()]
    assert len(logged) == (0 if isinstance(error, BotError) else 3)  # a BotError says itself; a bug is logged
    assert await store.lease(store.k("test", "lock"), "someone-else", 1)  # released after each attempt

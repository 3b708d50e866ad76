"""The store under load and failure, on a real Redis: a full pool is "busy" (not "unreachable",
no address), and shared work is done once — while its producer lives — and taken over when the
producer dies or fails."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from bot.core import store as store_module
from bot.core.store import Store, StoreBusy, StoreUnavailable


@pytest.fixture
async def tiny_store(redis_url, make_settings):
    """A store whose pool has one connection and waits 0.2 s for it."""
    pool = aioredis.BlockingConnectionPool.from_url(redis_url, max_connections=1, timeout=0.2)
    s = Store(aioredis.Redis(connection_pool=pool), make_settings().redis_prefix, "tiny, redis-internal.example:6379")
    yield s
    await s.close()


async def test_a_full_pool_is_busy_not_unreachable(tiny_store):
    held = await tiny_store.r.connection_pool.get_connection()
    try:
        with pytest.raises(StoreBusy) as caught:
            await tiny_store.get_json(tiny_store.k("x"))
    finally:
        await tiny_store.r.connection_pool.release(held)
    message = str(caught.value)
    assert "busy" in message and "unreachable" not in message and "redis-internal" not in message
    assert await tiny_store.get_json(tiny_store.k("x")) is None  # and it works again once freed


async def test_a_pool_waits_for_a_connection_instead_of_failing(tiny_store):
    """Many callers, one connection: each waits its turn (briefly) and all succeed."""
    results = await asyncio.gather(*(tiny_store.set_json(tiny_store.k("n", i), i) for i in range(50)))
    assert all(results)


async def test_unreachable_redis_names_no_address(make_settings):
    from tests.shared.redis_proc import free_port

    port = free_port()  # nothing listens there
    s = store_module.open_store(make_settings(redis_url=f"redis://:hunter2@127.0.0.1:{port}/0"))
    with pytest.raises(StoreUnavailable) as caught:
        await s.get_json("k")
    await s.close()
    assert "unreachable" in str(caught.value)
    assert str(port) not in str(caught.value) and "hunter2" not in str(caught.value)


async def claimed(store, key: str) -> None:
    for _ in range(400):
        if await store.r.exists(key + ":flight"):
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the first caller never claimed the flight")


async def test_concurrent_askers_share_one_production(store):
    calls = 0

    async def produce():
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.3)
        return {"n": calls}

    async def nothing():
        return None

    results = await asyncio.gather(
        *(store.single_flight(store.k("sf", "a"), produce, cached=nothing) for _ in range(10))
    )
    assert calls == 1 and results == [{"n": 1}] * 10


async def test_a_caller_after_the_flight_produces_afresh(store):
    """The shared result is for those who waited on that flight, not a cache."""
    calls = 0

    async def produce():
        nonlocal calls
        calls += 1
        return calls

    async def nothing():
        return None

    key = store.k("sf", "b")
    assert await store.single_flight(key, produce, cached=nothing) == 1
    assert await store.single_flight(key, produce, cached=nothing) == 2


async def test_a_failed_producer_lets_a_waiter_take_over(store):
    attempts = []

    async def produce():
        attempts.append(1)
        await asyncio.sleep(0.1)
        if len(attempts) == 1:
            raise RuntimeError("boom")
        return "second"

    async def nothing():
        return None

    key = store.k("sf", "c")
    first = asyncio.create_task(store.single_flight(key, produce, cached=nothing))
    await claimed(store, key)  # the first caller holds the flight before the second comes
    second = asyncio.create_task(store.single_flight(key, produce, cached=nothing))
    with pytest.raises(RuntimeError):
        await first
    assert await second == "second" and len(attempts) == 2


async def test_a_dead_producer_lets_a_waiter_take_over(store, monkeypatch):
    """A producer whose process died leaves a claim nobody renews: it lapses, a waiter produces."""
    monkeypatch.setattr(store_module, "FLIGHT_LEASE", 1)
    key = store.k("sf", "d")
    await store.r.set(key + ":flight", "dead-process", ex=1)  # what a killed producer leaves

    async def produce():
        return "taken over"

    async def nothing():
        return None

    assert await asyncio.wait_for(store.single_flight(key, produce, cached=nothing), 10) == "taken over"


async def test_a_waiter_reads_the_cache_a_finished_producer_filled(store):
    key = store.k("sf", "e")
    cache = {}

    async def cached():
        return cache.get("v")

    async def slow():
        await asyncio.sleep(0.2)
        cache["v"] = "from cache"
        return "from cache"

    async def never():
        raise AssertionError("a second production")

    first = asyncio.create_task(store.single_flight(key, slow, cached=cached))
    await claimed(store, key)  # the first caller holds the flight before the second comes
    assert await store.single_flight(key, never, cached=cached) == "from cache"
    assert await first == "from cache"


async def test_a_producer_whose_result_cannot_be_shared_lets_the_flight_go(store):
    """produce() returned but its result was not shared (here it is no JSON value): the claim is
    let go at once, so the next caller produces instead of waiting for a result that never comes."""
    key = store.k("sf", "f")
    calls = []

    async def unshareable():
        calls.append(1)
        return {1, 2}  # a set: json.dumps refuses it

    async def nothing():
        return None

    with pytest.raises(TypeError):
        await store.single_flight(key, unshareable, cached=nothing)
    assert not await store.r.exists(key + ":flight")

    async def fine():
        return "made"

    assert await asyncio.wait_for(store.single_flight(key, fine, cached=nothing), 5) == "made"

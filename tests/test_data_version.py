"""The data format version in Redis (bot/backup/version.py): written on an empty Redis, implied
(version 1) on data from before versions were kept, migrated once under a lock however many
processes start at once, and a newer version refused — by a process starting, in one sentence."""

from __future__ import annotations

import asyncio

import pytest

from bot.backup import version as V
from bot.backup.version import CURRENT, DataVersionError, ensure
from bot.core.store import open_store


async def test_an_empty_redis_gets_the_current_version(store):
    assert await ensure(store) == "new"
    assert await store.get_raw(store.k("meta:data-version")) == str(CURRENT).encode()
    assert await ensure(store) == "current"


async def test_data_from_before_versions_is_version_one_and_says_so_from_then_on(store):
    await store.hset_json(store.k("subs"), "slack:C1:acme/app", {"repo": "acme/app"})
    assert await ensure(store) == "current"
    assert await store.get_raw(store.k("meta:data-version")) == b"1"


async def test_a_newer_version_is_refused(store):
    await store.set_raw(store.k("meta:data-version"), b"7")
    with pytest.raises(DataVersionError) as refused:
        await ensure(store)
    assert str(refused.value) == (
        f"The data is of format version 7, newer than this bot's {CURRENT}: "
        "run a bot at least as new as the one that wrote it."
    )


def test_every_process_and_command_refuses_newer_data_in_one_sentence(run, redis_server):
    redis_server.set(run.prefix + "meta:data-version", b"7")
    for args in (["clock"], ["worker"], ["serve"], ["backup", "-"], ["feedback", "export"]):
        done = run(*args, env={"DEFAULT_LANG": "en"})
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1, (args, done.stderr)
        assert len(lines) == 1 and "format version 7, newer than this bot's" in lines[0], (args, done.stderr)
        assert "Traceback" not in done.stderr


def _migrated_shape():
    """A test-only registry: version 2 keeps each subscription's repository lower-cased."""
    calls: list[int] = []

    async def lower_repos(store) -> None:
        calls.append(1)
        await asyncio.sleep(0.3)  # long enough for every other starter to find the lock held
        for field, value in (await store.hgetall_json(store.k("subs"))).items():
            await store.hset_json(store.k("subs"), field, {**value, "repo": value["repo"].lower()})

    return {1: lower_repos}, calls


async def test_a_version_that_is_not_a_number_is_refused_as_such(store):
    await store.set_raw(store.k("meta:data-version"), b"v1-final")
    with pytest.raises(DataVersionError) as refused:
        await ensure(store)
    assert "is not a number this bot wrote" in str(refused.value)
    assert "newer" not in str(refused.value)
    assert store.k("meta:data-version") in str(refused.value)


async def test_several_processes_starting_at_once_migrate_once(make_settings):
    settings = make_settings()
    stores = [open_store(settings) for _ in range(6)]  # each its own connections, as processes have
    try:
        await stores[0].hset_json(stores[0].k("subs"), "slack:C1:Acme/App", {"repo": "Acme/App"})
        await V.set_version(stores[0], 1)
        steps, calls = _migrated_shape()
        outcomes = await asyncio.gather(*(ensure(s, current=2, steps=steps) for s in stores))
        assert sorted(outcomes) == ["migrated from 1"] + ["waited"] * 5
        assert calls == [1]
        assert await stores[0].get_raw(stores[0].k("meta:data-version")) == b"2"
        assert await stores[0].hgetall_json(stores[0].k("subs")) == {"slack:C1:Acme/App": {"repo": "acme/app"}}
        assert await stores[0].get_raw(stores[0].k("meta:migrating")) is None  # the lock is released
        assert await ensure(stores[1], current=2, steps=steps) == "current" and calls == [1]
    finally:
        for s in stores:
            await s.close()


async def test_a_dead_migrators_lock_lapses_and_the_next_start_migrates(store, monkeypatch):
    monkeypatch.setattr(V, "WAIT_POLL", 0.05)
    await V.set_version(store, 1)
    await store.lease(store.k("meta:migrating"), "a-process-that-died", 1)  # its lease runs out in 1 s
    steps, calls = _migrated_shape()
    await store.hset_json(store.k("subs"), "slack:C1:X", {"repo": "X"})
    assert await asyncio.wait_for(ensure(store, current=2, steps=steps), 10) == "migrated from 1"
    assert calls == [1]


async def test_a_version_without_a_migration_is_refused(store):
    await V.set_version(store, 1)
    with pytest.raises(DataVersionError, match="no migration from it to 3"):
        await ensure(store, current=3, steps=_migrated_shape()[0])
    assert await store.get_raw(store.k("meta:data-version")) == b"2"  # the step that exists ran

"""The data format version kept in Redis (`{prefix}meta:data-version`), checked by every process
and every CLI command that touches Redis before anything else (bot/__main__.py).

- No version key: an empty namespace gets CURRENT written; one holding the bot's keys was written
  before versions were kept, and is version 1.
- Older than CURRENT: the steps of `STEPS` run in order, under one lock (`meta:migrating`, a lease
  renewed while they run), so that of several processes starting at once exactly one migrates and
  the others wait for it, then go on. Each step is written to be run again (a process killed
  midway leaves the version of the last finished step, and the next start resumes from it).
- Newer than CURRENT (an older bot on a newer bot's data): refused in one sentence.
- A restore that never finished (`meta:restoring`) is refused too: the data is partial.

A step is `async def step(store) -> None`, registered under the version it migrates FROM; it
leaves the data in the shape of the next version. Version 1 is the shape of every release so far.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping

from settings import Settings

from ..core.models import BotError
from ..core.store import Store
from ..i18n import phrase
from .keys import DATA_VERSION, MIGRATING, RESTORING

log = logging.getLogger(__name__)

CURRENT = 1

Step = Callable[[Store], Awaitable[None]]
STEPS: Mapping[int, Step] = {}  # from version n to n + 1 (none yet: version 1 is the only shape so far)

LOCK_LEASE = 30  # seconds a migrating process holds the lock without renewing it
WAIT_POLL = 0.2


class DataVersionError(BotError):
    """The data in Redis is of a version this bot cannot use (or a restore into it is unfinished)."""


async def stored_version(store: Store) -> int | None:
    """The version key's value (None: absent; -1: not a version number, refused by `ensure`)."""
    raw = await store.get_raw(store.k(DATA_VERSION))
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return -1


async def set_version(store: Store, version: int) -> None:
    await store.set_raw(store.k(DATA_VERSION), str(version).encode())


async def has_bot_keys(store: Store) -> bool:
    """Whether the namespace holds any key besides the meta keys."""
    meta = store.prefix + "meta:"
    return await store.any_key(store.prefix + "*", skip=lambda k: k.startswith(meta))


async def ensure(store: Store, *, current: int = CURRENT, steps: Mapping[int, Step] | None = None) -> str:
    """Make the data `current`'s shape or refuse; what happened ("current", "new", "migrated from
    N", "waited"), for logs and tests."""
    steps = STEPS if steps is None else steps
    if await store.get_raw(store.k(RESTORING)) is not None:
        raise DataVersionError(phrase("backup.restore_unfinished"))
    version = await stored_version(store)
    if version is None:
        if not await has_bot_keys(store):
            # SET NX: two processes starting on an empty Redis write the same value once
            await store.set_json(store.k(DATA_VERSION), current, nx=True)
            return "new"
        version = 1
        if version == current:  # said out loud from now on
            await store.set_json(store.k(DATA_VERSION), current, nx=True)
    _check_known(version, current, store.k(DATA_VERSION))
    if version == current:
        return "current"
    return await _migrate(store, version, current, steps)


def _check_known(version: int, current: int, key: str) -> None:
    if version < 1:  # not a number we wrote: nothing to migrate from, nothing to trust
        raise DataVersionError(phrase("backup.data_version_unreadable", key=key, known=current))
    if version > current:
        raise DataVersionError(phrase("backup.data_too_new", found=version, known=current))


async def _migrate(store: Store, version: int, current: int, steps: Mapping[int, Step]) -> str:
    owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    lock = store.k(MIGRATING)
    waited = False
    while not await store.lease(lock, owner, LOCK_LEASE):
        if not waited:
            log.info("data format version %s: another process is migrating it; waiting", version)
        waited = True
        await asyncio.sleep(WAIT_POLL)
        found = await stored_version(store)
        if found == current:
            return "waited"
    keeper = asyncio.create_task(_keep(store, lock, owner))
    try:
        # read again under the lock: the process that held it may have finished the work
        found = await stored_version(store)
        version = 1 if found is None else found
        _check_known(version, current, store.k(DATA_VERSION))
        start = version
        while version < current:
            step = steps.get(version)
            if step is None:
                raise DataVersionError(phrase("backup.no_migration", found=version, known=current))
            log.warning("migrating the data format from version %d to %d", version, version + 1)
            await step(store)
            version += 1
            await set_version(store, version)
        return f"migrated from {start}" if start < current else ("waited" if waited else "current")
    finally:
        keeper.cancel()
        try:
            await store.release(lock, owner)
        except BotError:
            pass  # the lease lapses by itself


async def _keep(store: Store, lock: str, owner: str) -> None:
    while True:
        await asyncio.sleep(LOCK_LEASE / 3)
        try:
            await store.renew(lock, owner, LOCK_LEASE)
        except BotError:
            continue


async def check_settings(settings: Settings) -> str:
    """`ensure` on the Redis `settings` name (the embedded one included), for a starting process."""
    from ..core.store import open_store

    store = open_store(settings)
    try:
        return await ensure(store)
    finally:
        await store.close()

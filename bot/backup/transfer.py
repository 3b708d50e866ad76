"""Taking a backup of the bot's namespace and restoring one (the CLI: bot/cli/backup.py).

Backup: every key under REDIS_PREFIX that keys.py keeps (SCAN, then each key read whole with its
type and remaining TTL, in batches). It is read while the bot may run: each key is whole, but keys
written during the backup may or may not be in it (docs/operations.md: stop the clock and workers,
or snapshot with Redis itself, for one instant).

Restore, in an order that makes an interruption visible and the command safe to run again:
1. the file is read and checked whole (file_format.read) — a bad file changes nothing;
2. the target must not hold the bot's data already: a key a backup would keep refuses it, unless
   `force` (caches, locks and health beacons do not count: a freshly started, empty bot has them);
3. `meta:restoring` is written FIRST: until it is removed every process refuses to start, and
   `restore` run again treats the namespace as partial and replaces it without `--force`;
4. with `force` (or after an interrupted restore) every key under the prefix, and this prefix's
   queued jobs, are deleted — the result is the file's data, never a mix of two deployments;
5. the keys are written (each replaced whole, its TTL as it was when the backup was taken);
6. the data version is set to the file's, `meta:restoring` removed LAST, and the data migrated
   to this bot's version if the file's is older.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from ..core.models import UsageError
from ..core.store import Store
from ..i18n import Count, phrase
from . import file_format
from .file_format import Archive, ArchiveError
from .keys import RESTORING, is_queue_key, kept
from .version import CURRENT, ensure, set_version, stored_version

BATCH = 500


@dataclass(frozen=True)
class Taken:
    data: bytes
    keys: int


async def take(store: Store, *, bot_version: str, now: datetime) -> Taken:
    names = sorted(k for k in await store.scan(store.prefix + "*") if kept(k, store.prefix))
    items: list[file_format.Item] = []
    for i in range(0, len(names), BATCH):
        try:
            read = await store.read_keys(names[i : i + BATCH])
        except ValueError as exc:  # a type the bot never writes: someone else's key under our prefix
            raise UsageError(phrase("backup.unknown_type", kind=str(exc))) from None
        items.extend((k[len(store.prefix) :], t, ttl, v) for k, t, ttl, v in read)
    version = await stored_version(store) or (1 if items else CURRENT)
    data = file_format.encode(items, prefix=store.prefix, data_version=version, bot_version=bot_version, created=now)
    return Taken(data, len(items))


@dataclass(frozen=True)
class Restored:
    keys: int
    cleared: int  # keys deleted first (with --force, or after an interrupted restore)
    migration: str


async def restore(store: Store, found: Archive, *, force: bool, now: datetime) -> Restored:
    if found.prefix != store.prefix:
        raise ArchiveError(phrase("backup.other_prefix", found=found.prefix, configured=store.prefix))
    if found.data_version > CURRENT or found.data_version < 1:
        raise ArchiveError(phrase("backup.data_too_new", found=found.data_version, known=CURRENT))
    marker = store.k(RESTORING)
    interrupted = await store.get_raw(marker) is not None
    present = await store.scan(store.prefix + "*")
    if not force and not interrupted:
        held = [k for k in present if kept(k, store.prefix)]
        if held:
            raise UsageError(phrase("backup.not_empty", keys=Count(len(held), "counts.key"), prefix=store.prefix))
    # first: from here until the end, the namespace is known to be partial
    await store.set_json(marker, {"sha256": found.header["sha256"], "at": now.isoformat()})
    cleared = 0
    if force or interrupted:
        doomed = [k for k in present if k != marker]
        doomed += [k for k in await store.scan("arq:*") if is_queue_key(k, store.prefix)]
        await store.unlink(doomed)
        cleared = len(doomed)
    items = [(store.prefix + k, t, ttl, v) for k, t, ttl, v in found.items]
    for i in range(0, len(items), BATCH):
        await store.write_keys(items[i : i + BATCH])
    await set_version(store, found.data_version)
    await store.delete(marker)  # last: the data is whole
    return Restored(len(items), cleared, await ensure(store))


def describe(found: Archive) -> str:
    """The header, for logs."""
    return json.dumps({k: found.header[k] for k in ("bot", "created", "data_version", "keys")})

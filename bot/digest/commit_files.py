"""A commit's files and patches for the digests: from the cache when another run already fetched
them, else from the source (at most GITHUB_FETCH_CONCURRENCY reads at a time), then cached.

A digest looks for its whole day's files in one round trip first (`absent`): each commit analysed
used to look for its own, a day's worth of round trips that find nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..core.models import BotError, Commit, FileChange, file_from_dict, to_dict
from ..core.store import FILES_LEVEL, FILES_TTL, Store
from ..sources import CommitSource


class CommitFiles:
    def __init__(self, store: Store, fetch_concurrency: int):
        self.store = store
        self._fetch_slots = asyncio.Semaphore(fetch_concurrency)
        # (cache_id, sha) of the commits whose files the cache was just found not to hold, by a
        # digest being analysed: the first read of each goes to the source without a look of its
        # own. Each entry is used once and the digest takes its own away when it ends (`forget`),
        # so the set holds only the commits of digests under way.
        self._absent: set[tuple[str, str]] = set()

    async def get(self, source: CommitSource, sha: str) -> tuple[FileChange, ...]:
        key = self.store.files_key(source.cache_id, sha)
        if (source.cache_id, sha) in self._absent:
            # (found absent moments ago; had another process stored them since, reading them again
            # from the source costs a read, never a wrong result: a commit's files do not change)
            self._absent.discard((source.cache_id, sha))
        elif (cached := await self.store.get_blob(key)) is not None:
            return tuple(file_from_dict(f) for f in cached)
        async with self._fetch_slots:
            files = await source.get_files(sha)
        # encoded in a worker thread: a large commit's patches are megabytes to compress (FILES_LEVEL)
        payload = await asyncio.to_thread(lambda: self.store.encode_blob([to_dict(f) for f in files], FILES_LEVEL))
        await self.store.set_raw(key, payload, ttl=FILES_TTL)
        return files

    async def look(self, source: CommitSource, commits: Sequence[Commit]) -> set[tuple[str, str]]:
        """Note which of these commits' files the cache does not hold, in one round trip; returns
        them, for `forget` when the digest ends."""
        expect_files(source, commits)
        if len(commits) < 2:
            return set()
        try:
            held = await self.store.exists_each([self.store.files_key(source.cache_id, c.sha) for c in commits])
        except BotError:  # each commit looks for itself, and says what failed in its entry
            return set()
        absent = {(source.cache_id, c.sha) for c, there in zip(commits, held) if not there}
        self._absent |= absent
        return absent

    def forget(self, absent: set[tuple[str, str]]) -> None:
        """Those not read (their analyses were cached) are forgotten with the digest."""
        self._absent -= absent


def expect_files(source, commits: Sequence[Commit]) -> None:
    """Tell a source that reads many commits' files at once (a local git repository: one git
    call for the day) which ones are coming; others have no `expect_files`."""
    expect = getattr(source, "expect_files", None)
    if expect is not None:
        expect(commits)

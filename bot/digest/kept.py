"""A kept digest's bookkeeping besides the digest itself (bot/digest/builder.py keeps that):

{digest key}:shown   hash: place → {"rev": revision drawn there, "fails": redraws that failed};
                     a place is ["posted", platform, channel, first message id] (the record
                     bot/delivery/posted.py keeps) or ["report", report id] (bot/report/archive.py).
                     Its "revision" field is the kept digest's revision, set by every pass
                     before it redraws, so a place registered late sees it is behind.
improve:due          sorted set: digest key → epoch second its next improve pass may start.
"""

from __future__ import annotations

import json

from ..core.models import Digest

SHOWN_TTL = 14 * 86400  # as long as a posted message can be redrawn (Feishu: 14 days)
REVISION = "revision"


def posted_place(platform: str, channel: str, message_id: str) -> str:
    return json.dumps(["posted", platform, channel, message_id])


def report_place(report_id: str) -> str:
    return json.dumps(["report", report_id])


class Kept:
    def __init__(self, store):
        self.store = store

    @property
    def due_key(self) -> str:
        return self.store.k("improve", "due")

    @staticmethod
    def shown_key(key: str) -> str:
        return key + ":shown"

    async def shown(self, digest: Digest, place: str) -> None:
        """`place` now shows `digest` as of its revision. If the kept digest is further on already
        (a pass improved it while this was being posted), the next pass is due at once."""
        if not digest.kept_as:
            return  # a window still open: nothing is kept, nothing will be improved
        key = self.shown_key(digest.kept_as)
        await self.store.hset_json(key, place, {"rev": digest.revision})
        await self.store.expire(key, SHOWN_TTL)
        # Read after the write: a pass sets the revision before it reads the places, so either it
        # sees this place or this sees its revision.
        if (await self.store.hget_json(key, REVISION) or 0) > digest.revision:
            await self.schedule(digest.kept_as, 0, only_earlier=True)

    async def places(self, key: str) -> dict[str, dict]:
        found = await self.store.hgetall_json(self.shown_key(key))
        found.pop(REVISION, None)
        return found

    async def set_revision(self, key: str, revision: int) -> None:
        await self.store.hset_json(self.shown_key(key), REVISION, revision)
        await self.store.expire(self.shown_key(key), SHOWN_TTL)

    async def drawn(self, key: str, place: str, revision: int, fails: int = 0) -> None:
        await self.store.hset_json(self.shown_key(key), place, {"rev": revision, "fails": fails})

    async def schedule(self, key: str, at: int, *, only_earlier: bool = False) -> None:
        await self.store.zadd(self.due_key, key, at, only_earlier=only_earlier)

    async def due(self, until: int, limit: int) -> list[tuple[str, int]]:
        return await self.store.zdue(self.due_key, until, limit)

    async def finished(self, key: str, claimed: int) -> bool:
        """Nothing more to do for `key`, unless someone scheduled it again since `claimed`."""
        return await self.store.zrem_if(self.due_key, key, claimed)

    async def forget(self, key: str) -> None:
        await self.store.zrem(self.due_key, key)

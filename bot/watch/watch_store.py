"""Who watches what, kept in Redis:

  watches   hash: "{platform}:{user}:{repo}:{glob}" → Watch JSON

A watch belongs to a person (platform, user), not to a channel: its messages go to the one-to-one
conversation between the bot and that person (`channel`, found when the watch was made).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

MAX_WATCHES = 20  # per person: each is a daily listing and diff reading of its repository


@dataclass(frozen=True)
class Watch:
    platform: str
    user: str
    channel: str  # the bot's direct conversation with the person
    repo: str  # as commands name it (owner/name, or the default repository)
    glob: str
    at: str = "09:00"  # HH:MM, local time in tz
    tz: str = "Asia/Shanghai"
    lang: str = "zh"

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.user}:{self.repo.lower()}:{self.glob}"


class Watches:
    def __init__(self, store):
        self.store = store

    @property
    def _hash(self) -> str:
        return self.store.k("watches")

    async def upsert(self, watch: Watch) -> bool:
        """Store `watch`; True when it is new (the same repository and pattern again: updated)."""
        return await self.store.hset_json(self._hash, watch.key, asdict(watch))

    async def all(self) -> list[Watch]:
        raw = await self.store.hgetall_json(self._hash)
        watches = [Watch(**{k: v for k, v in w.items() if k in Watch.__dataclass_fields__}) for w in raw.values()]
        return sorted(watches, key=lambda w: (w.platform, w.user, w.repo.lower(), w.glob))

    async def of(self, platform: str, user: str) -> list[Watch]:
        return [w for w in await self.all() if w.platform == platform and w.user == user]

    async def remove(self, platform: str, user: str, repo: str, glob: str | None = None) -> list[Watch]:
        """Remove the person's watches of `repo` (only the pattern `glob` when given); the removed ones."""
        gone = [
            w
            for w in await self.of(platform, user)
            if w.repo.lower() == repo.lower() and (glob is None or w.glob == glob)
        ]
        for w in gone:
            await self.store.hdel(self._hash, w.key)
        return gone

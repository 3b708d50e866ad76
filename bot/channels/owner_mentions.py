"""Who a conversation tells when a commit touches a code owner's paths: CODEOWNERS names (`@user`,
`@org/team`, an e-mail) mapped to the chat's people or groups, per conversation, in Redis next to
its subscriptions.

  owners:{platform}:{channel}   hash: owner (lower case) → {"owner", "kind", "id"}

`kind` is how the mention is sent: `slack_user` (`<@U…>`), `slack_group` (`<!subteam^S…>`),
`feishu_user` (`<at id=ou_…></at>`) or `name` (the terminal: a name, shown as typed): each
platform's entry in bot/core/platform_registry.py lists its kinds (`mentions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.codeowners_file import owner_key


@dataclass(frozen=True)
class OwnerMapping:
    owner: str  # as typed: @org/team, @user or an e-mail
    kind: str  # slack_user | slack_group | feishu_user | name
    id: str  # U…, S…, ou_…, or the name


class OwnerMappings:
    def __init__(self, store):
        self.store = store

    def _key(self, platform: str, channel: str) -> str:
        return self.store.k("owners", platform, channel)

    async def set(self, platform: str, channel: str, mapping: OwnerMapping) -> bool:
        """Map an owner (replacing its mapping); True when it was not mapped before."""
        data = {"owner": mapping.owner, "kind": mapping.kind, "id": mapping.id}
        return await self.store.hset_json(self._key(platform, channel), owner_key(mapping.owner), data)

    async def remove(self, platform: str, channel: str, owner: str) -> bool:
        return await self.store.hdel(self._key(platform, channel), owner_key(owner))

    async def of(self, platform: str, channel: str) -> dict[str, OwnerMapping]:
        """owner (lower case) → its mapping."""
        raw = await self.store.hgetall_json(self._key(platform, channel))
        return {k: OwnerMapping(v["owner"], v["kind"], v["id"]) for k, v in raw.items()}

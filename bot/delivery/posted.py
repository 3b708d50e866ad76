"""The digest messages the bot posted, kept so that a level tap can redraw the message it came from.

A tap names a commit and the message it was made in (Slack's message ts, Feishu's message id,
the console's number). To show the corrected level in that message, the bot needs what the
message showed: the content as posted (a digest's parent, a commit's detail, the low commits, the
bots' lines). It is kept here, compressed, under every message id it was posted as, for as long as
Feishu lets a card be updated:

  posted:{platform}:{channel}:{message id}   {"kind", "content", "parts", "thread"}  (TTL 14 days)

`parts` are the ids of all the messages the content was split into (Slack's continuation
messages, Feishu's continuation cards), in order; `thread` the thread they were posted in (button
values carry it, so a redraw renders the same buttons). A thread reply's digest parent is the
thread's root: its record is found under that id. The same record serves the improve pass
(bot/improve/): a kept digest's messages are redrawn from it when a retry improves the digest.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from ..core.chat_platform import (
    BotGroup,
    BotUpdates,
    CommitDetail,
    Content,
    DigestParent,
    LowCommits,
    MessageRef,
    OwnerPing,
)
from ..core.models import BotError, Digest, Importance, digest_from_dict, entry_from_dict, to_dict
from ..digest.kept import Kept, posted_place

log = logging.getLogger(__name__)

POSTED_TTL = 14 * 86400  # Feishu refuses to update a card older than 14 days


@dataclass(frozen=True)
class Posted:
    content: Content
    parts: tuple[str, ...]  # the message ids the content was posted as, in order
    thread: str | None  # the thread it was posted in


def _slim(d: Digest, entries) -> Digest:
    """A thread reply's digest without the other commits: its renderers read only the digest's
    name, window, language and fork, and the entries the reply shows."""
    return replace(d, entries=tuple(entries), headline=(), notices=())


def content_data(content: Content) -> dict[str, Any] | None:
    """A content as JSON (None for kinds no tap is made from)."""
    if isinstance(content, DigestParent):
        return {"kind": "parent", **to_dict(content)}
    if isinstance(content, CommitDetail):
        return {"kind": "detail", **to_dict(replace(content, digest=_slim(content.digest, (content.entry,))))}
    if isinstance(content, LowCommits):
        total = content.total or content.digest.count(Importance.LOW)
        slim = replace(content, digest=_slim(content.digest, content.entries), total=total)
        return {"kind": "low", **to_dict(slim)}
    if isinstance(content, BotUpdates):
        entries = [e for g in content.groups for e in g.entries]
        return {"kind": "bots", **to_dict(replace(content, digest=_slim(content.digest, entries)))}
    return None


def content_from_data(data: dict[str, Any]) -> Content:
    kind = data["kind"]
    digest = digest_from_dict(data["digest"])
    if kind == "parent":
        owners = tuple(OwnerPing(**o) for o in data.get("owners") or ())
        return DigestParent(
            digest, data.get("min_importance") or "low", data.get("report_url"), owners, data.get("more_owners") or 0
        )
    if kind == "detail":
        return CommitDetail(digest, entry_from_dict(data["entry"]))
    if kind == "low":
        return LowCommits(
            digest,
            tuple(entry_from_dict(e) for e in data["entries"]),
            total=data.get("total") or 0,
            more=data.get("more") or 0,
            more_how=data.get("more_how") or "",
            report_url=data.get("report_url"),
        )
    if kind == "bots":
        groups = tuple(BotGroup(g["author"], tuple(entry_from_dict(e) for e in g["entries"])) for g in data["groups"])
        return BotUpdates(digest, groups)
    raise ValueError(f"unknown posted content {kind!r}")


class PostedMessages:
    def __init__(self, store):
        self.store = store

    def _key(self, platform: str, channel: str, message_id: str) -> str:
        return self.store.k("posted", platform, channel, message_id)

    async def remember(self, platform: str, ref: MessageRef, content: Content, thread: str | None) -> None:
        """Keep what `ref`'s messages show. Never fails the delivery: a message that is not kept
        can still be corrected elsewhere (the report page, another digest), only not redrawn."""
        data = content_data(content)
        if data is None:
            return
        parts = ref.parts or (ref.id,)
        record = {"content": data, "parts": list(parts), "thread": thread}
        try:
            for part in parts:
                await self.store.set_blob(self._key(platform, ref.channel, part), record, ttl=POSTED_TTL)
            # …and as a place its digest was shown, redrawn when a retry improves it (bot/improve/)
            digest = content.digest  # type: ignore[union-attr]  # every kept content has one
            await Kept(self.store).shown(digest, posted_place(platform, ref.channel, parts[0]))
        except BotError as exc:
            log.warning("could not keep posted message %s for level corrections: %s", ref.id, exc)

    async def get(self, platform: str, channel: str, message_id: str) -> Posted | None:
        if not message_id:
            return None
        record = await self.store.get_blob(self._key(platform, channel, message_id))
        if not record:
            return None
        return Posted(content_from_data(record["content"]), tuple(record["parts"]), record.get("thread"))

    async def replace(self, platform: str, channel: str, posted: Posted, content: Content) -> None:
        """Keep the redrawn content in place of the old one (the next tap starts from it)."""
        ref = MessageRef(channel, posted.parts[0], posted.thread, parts=posted.parts)
        await self.remember(platform, ref, content, posted.thread)

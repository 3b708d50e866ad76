"""A reader's "level too high / too low" tap, from any chat platform.

The tap names a commit, a direction and the message it was made in. The commit must be one the
message shows (bot/delivery/posted.py keeps what each digest message showed): anything else is a
stale or forged tap, refused in one sentence with nothing recorded. The new level is one step
from the level shown now (the analysis's, or the correction in force), recorded as the tapper's
correction of that commit in the digest's repository (bot/taste/corrections.py: one per person
per commit, the latest wins), in the conversation's workspace scope; at the end of the scale nothing is recorded. The tapper is told in
one sentence, in the digest's language, and the message — and its digest's parent, whose counts
change — are redrawn in place with the corrected level and who set it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime

from ..core.chat_platform import ChatPlatform, Conversation, MessageRef, Notice
from ..core.models import BotError, Importance
from ..core.store import Store
from ..core.tenants import scope_of
from ..delivery.posted import Posted, PostedMessages
from ..i18n import text
from ..levels.overlay import correct, entries_of, overlay_content
from ..render import labels as L
from ..taste.corrections import DIRECTIONS, TOO_HIGH, Corrections, nudge

log = logging.getLogger(__name__)

_HEX = re.compile(r"[0-9a-f]{7,40}")


class LevelTaps:
    def __init__(self, store: Store, corrections: Corrections, default_lang: str, clock: Callable[[], datetime]):
        self.posted = PostedMessages(store)
        self.corrections = corrections
        self.default_lang = default_lang
        self.clock = clock

    async def tap(self, conv: Conversation, platform: ChatPlatform, value: dict) -> None:
        """`value`: {sha, dir (too_high | too_low), message (the tapped message's id), lang}."""
        lang = str(value.get("lang")) if value.get("lang") in ("zh", "en") else self.default_lang
        sha = str(value.get("sha") or "").strip().lower()
        direction = value.get("dir")
        if direction not in DIRECTIONS:
            return await self._say(platform, conv, lang, "levels.bad_direction", "error")
        posted = await self.posted.get(conv.platform, conv.channel, str(value.get("message") or ""))
        if posted is None:
            return await self._say(platform, conv, lang, "levels.gone", "error")
        digest = posted.content.digest  # type: ignore[union-attr]  # every kept content has one
        lang = digest.lang
        # A full SHA, or (a menu's compact value) a prefix naming exactly one of the message's commits.
        named = [e for e in entries_of(posted.content) if len(sha) >= 7 and e.commit.sha.startswith(sha)]
        entry = named[0] if len(named) == 1 else None
        if entry is None or entry.analysis is None:
            shown = sha[:12] if _HEX.fullmatch(sha) else "?"
            return await self._say(platform, conv, lang, "levels.unknown_commit", "error", sha=shown)
        sha = entry.commit.sha
        scope = scope_of(conv.platform, conv.channel)  # this workspace's corrections, and the shared ones
        effective = dict(await self.corrections.effective(digest.repo, scope))
        now = correct(entry, effective.get(sha), lang).importance
        level = nudge(now.value, direction)
        if level is None:
            key = "levels.lowest" if direction == TOO_HIGH else "levels.highest"
            return await self._say(
                platform, conv, lang, key, sha=entry.commit.short_sha, level=L.importance_label(lang, now)
            )
        kept = await self.corrections.record(digest.repo, sha, level, conv.user, at=self.clock(), scope=scope)
        effective[sha] = kept
        await self._say(
            platform,
            conv,
            lang,
            "levels.recorded",
            sha=entry.commit.short_sha,
            title=entry.commit.title,
            level=L.importance_label(lang, Importance(kept.level)),
        )
        await self._redraw(conv, platform, posted, effective)
        root = posted.thread
        if root and root not in posted.parts:  # a thread reply: its parent's counts changed too
            parent = await self.posted.get(conv.platform, conv.channel, root)
            if parent is not None:
                await self._redraw(conv, platform, parent, effective)

    async def typed(self, conv: Conversation, platform: ChatPlatform, sha: str, direction: str, lang: str) -> None:
        """`level SHA too-high|too-low` (`太高|太低`) typed in a digest's thread: the tap of that
        commit's button, on the digest message the thread hangs from (its counts and headline are
        redrawn; the commit's own reply shows the correction from the next digest on)."""
        if not direction:
            return await self._say(platform, conv, lang, "levels.thread_usage", "usage")
        posted = await self.posted.get(conv.platform, conv.channel, conv.thread or "")
        if posted is None:
            return await self._say(platform, conv, lang, "levels.gone", "error")
        shown = [e for e in entries_of(posted.content) if e.analysis is not None]
        if not sha and len(shown) == 1:
            sha = shown[0].commit.sha
        elif not sha:
            example = shown[0].commit.short_sha if shown else "abc1234"
            return await self._say(platform, conv, lang, "levels.thread_which", "usage", sha=example)
        await self.tap(conv, platform, {"sha": sha, "dir": direction, "message": conv.thread, "lang": lang})

    async def _redraw(self, conv: Conversation, platform: ChatPlatform, posted: Posted, effective) -> None:
        """The message as it shows now, in place; a failure is logged (the correction is kept and
        shows in every later digest)."""
        content = overlay_content(posted.content, effective)
        ref = MessageRef(conv.channel, posted.parts[0], posted.thread, parts=posted.parts)
        try:
            if await platform.revise(ref, content):
                await self.posted.replace(conv.platform, conv.channel, posted, content)
            else:
                log.info("message %s not redrawn: it would no longer fit as many messages", ref.id)
        except BotError as exc:
            log.warning("could not redraw message %s after a level correction: %s", ref.id, exc)

    async def _say(
        self, platform: ChatPlatform, conv: Conversation, lang: str, key: str, kind: str = "info", **values
    ) -> None:
        await platform.reply_private(conv, Notice(text(lang, key, **values), kind, lang))

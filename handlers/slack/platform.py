"""Sending to Slack (`SlackPlatform`): contents rendered by bot/render/slack.py into payloads within
Block Kit's limits, posted in each channel's order and pace; keyed sends (scheduled digests) are
idempotent across crashes: a marker in Redis plus the key in the message's metadata let a
restarted process find what it already posted.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from bot.core import tenants
from bot.core.chat_platform import Content, Conversation, MessageRef
from bot.render import slack as R
from handlers.slack import api
from handlers.slack.api import SlackError
from handlers.slack.poster import Pacing, SlackPoster
from handlers.slack.stream import AnswerStream, StreamEscaper

log = logging.getLogger(__name__)

SENT_TTL = 7 * 86400
LOOKUP_PAGE_SIZE = 200  # messages per conversations.history / replies page
LOOKUP_PAGES = 25  # pages read at most when looking for what a crashed process already posted
METADATA_EVENT = "digest_bot_message"


class SlackPlatform(SlackPoster):
    name = "slack"
    supports_streaming = True
    supports_buttons = True
    supports_files = True
    # keyed sends are made idempotent here (a Redis marker + message metadata)
    send_dedupe_window: float | None = None

    def __init__(self, client: api.AsyncWebClient, store=None, pacing: Pacing | None = None, workspaces=None):
        super().__init__(client, pacing, workspaces)
        self.store = store

    # --- ChatPlatform ---------------------------------------------------------------------------
    async def reaches(self, channel: str) -> bool:
        """Whether the channel's workspace can be sent to (installed); the clock skips it if not."""
        return await self.workspaces.reaches(channel)

    async def send(
        self, channel: str, content: Content, *, thread: str | None = None, key: str | None = None
    ) -> MessageRef:
        """All payloads of one content go out together (the channel's lock is held throughout),
        continuations in the thread — of the first message when it is top level."""
        payloads = R.render(content, thread=thread)
        async with self.pacer.lock(channel):
            if key and self.store is not None:
                parts = await self._send_once(channel, payloads, thread, key)
            else:
                parts = [await self._post_locked(channel, payloads[0], thread)]
                for payload in payloads[1:]:
                    parts.append(await self._post_locked(channel, payload, thread or parts[0]))
        return MessageRef(channel, parts[0], thread, parts=tuple(parts))

    async def _send_once(self, channel: str, payloads: list[dict], thread: str | None, key: str) -> list[str]:
        """Post a keyed content at most once, even across a crash between a post and its
        bookkeeping: a Redis marker says a post may have happened, and the key in each message's
        metadata finds what made it. Called with the channel's lock held. Returns the messages'
        ts, in order (only the first when an earlier run finished it)."""
        mark = self.store.k("slack", "sent", key)
        state = await self.store.get_json(mark) or {}
        if state.get("done") and state.get("ts"):
            return list(state.get("parts") or [state["ts"]])
        found = await self._find_posted(channel, thread, key, state.get("ts")) if state else {}
        first = found.get(0)
        if first is None:
            await self.store.set_json(mark, {"pending": True}, ttl=SENT_TTL)
            first = await self._post_locked(channel, payloads[0], thread, _metadata(key, 0))
            await self.store.set_json(mark, {"pending": True, "ts": first}, ttl=SENT_TTL)
        parts = [first]
        for part, payload in enumerate(payloads[1:], 1):
            if part not in found:
                parts.append(await self._post_locked(channel, payload, thread or first, _metadata(key, part)))
            else:
                parts.append(found[part])
        await self.store.set_json(mark, {"ts": first, "done": True, "parts": parts}, ttl=SENT_TTL)
        return parts

    async def _find_posted(self, channel: str, thread: str | None, key: str, first: str | None) -> dict[int, str]:
        """{part: ts} of this content's messages already in Slack (found by the key in their
        metadata): in the thread, or at top level plus the first message's own thread."""
        found: dict[int, str] = {0: first} if first else {}
        try:
            if thread:
                found.update(await self._keyed(key, "conversations.replies", channel=channel, ts=thread))
            else:
                if not first:
                    found.update(await self._keyed(key, "conversations.history", channel=channel))
                if found.get(0):
                    found.update(await self._keyed(key, "conversations.replies", channel=channel, ts=found[0]))
        except SlackError as exc:
            log.warning("could not check whether %s was already posted (%s); posting it", key, exc)
        return found

    async def _keyed(self, key: str, method: str, **kwargs) -> dict[int, str]:
        """{part: ts} of this content's messages found by `method`, following its cursor (a
        busy channel may have pushed the message off the first page) for a bounded number of pages."""
        found: dict[int, str] = {}
        cursor = None
        for _ in range(LOOKUP_PAGES):
            page = dict(kwargs, cursor=cursor) if cursor else kwargs
            data = await self.call(method, include_all_metadata=True, limit=LOOKUP_PAGE_SIZE, **page)
            for m in data.get("messages") or []:
                meta = m.get("metadata") or {}
                payload = meta.get("event_payload") or {}
                if meta.get("event_type") == METADATA_EVENT and payload.get("key") == key:
                    found.setdefault(int(payload.get("part", 0)), str(m["ts"]))
            cursor = (data.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
        return found

    async def update(self, ref: MessageRef, content: Content) -> MessageRef:
        payloads = R.render(content, thread=ref.thread)
        first = payloads[0]
        await self.call("chat.update", channel=ref.channel, ts=ref.id, text=first["text"], blocks=first["blocks"])
        parts = [ref.id]
        if len(payloads) > 1:
            async with self.pacer.lock(ref.channel):
                for payload in payloads[1:]:
                    parts.append(await self._post_locked(ref.channel, payload, ref.thread_root))
        return MessageRef(ref.channel, ref.id, ref.thread, parts=tuple(parts))

    async def revise(self, ref: MessageRef, content: Content) -> bool:
        parts = ref.parts or (ref.id,)
        payloads = R.render(content, thread=ref.thread)
        if len(payloads) != len(parts):
            return False  # redrawn it would take more (or fewer) messages: leave it as posted
        for ts, payload in zip(parts, payloads):
            await self.call("chat.update", channel=ref.channel, ts=ts, text=payload["text"], blocks=payload["blocks"])
        return True

    async def reply_private(self, conv: Conversation, content: Content) -> None:
        """Ephemeral to the asking user (in their thread); a DM is private already. If Slack
        refuses (the bot is not in the channel), the slash command's response_url still works."""
        if conv.is_dm:
            await self.send(conv.channel, content, thread=conv.thread)
            return
        payloads = R.render(content, thread=conv.thread)
        for i, payload in enumerate(payloads):
            args: dict[str, Any] = dict(
                channel=conv.channel, user=tenants.local_id(conv.user), text=payload["text"], blocks=payload["blocks"]
            )
            if conv.thread:
                args["thread_ts"] = conv.thread
            try:
                await self.call("chat.postEphemeral", **args)
            except SlackError as exc:
                url = (conv.extra or {}).get("response_url")
                if not url:
                    raise
                log.info("postEphemeral refused (%s); answering through response_url", exc)
                for rest in payloads[i:]:
                    await self._respond(url, rest)
                return

    async def direct_channel(self, conv: Conversation) -> str | None:
        """The bot's own IM with the person (conversations.open, scope im:write): a slash command
        typed in a DM between two people carries that DM's id, where the bot cannot post."""
        if not conv.is_dm:
            return None
        data = await self.call_in(conv.channel, "conversations.open", users=tenants.local_id(conv.user))
        return tenants.qualify(tenants.tenant_of(conv.channel), str(data["channel"]["id"]))

    async def _respond(self, url: str, payload: dict) -> None:
        await api.respond(url, payload)

    async def stream(
        self, channel: str, thread: str, pieces: AsyncIterator[str], *, conv: Conversation | None = None, lang: str = ""
    ) -> MessageRef:
        writer = AnswerStream(self, channel, thread, conv)
        escaper = StreamEscaper()
        try:
            async for piece in pieces:
                out = escaper.feed(piece)
                if out:
                    await writer.write(out)
            await writer.write(escaper.flush())
        finally:
            ref = await writer.close()
        return ref

    async def send_unless_posted(
        self, channel: str, content: Content, *, thread: str | None = None, key: str, since: float
    ) -> MessageRef | None:
        """Never asked (no dedupe window): `send` with a key already finds what was posted."""
        return None

    async def config_caveat(self, channel: str, questions: str, lang: str) -> str | None:
        return None  # every setting works on Slack as configured

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        client, local = await self.client_for(channel)
        args: dict[str, Any] = dict(channel=local, content=text, filename=filename, title=title)
        if thread:
            args["thread_ts"] = thread
        async with self.pacer.lock(channel):
            await self.pacer.wait_turn(channel)
            await api.upload(client, **args)


def _metadata(key: str, part: int) -> dict:
    return {"event_type": METADATA_EVENT, "event_payload": {"key": key, "part": part}}

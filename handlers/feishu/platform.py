"""Sending to Feishu (`FeishuPlatform`): interactive cards (bot.render.feishu), always with a `uuid`
so a send retried within the hour never doubles a message (later, `send_unless_posted` reads the
chat back and finds a keyed send's cards by the element_id marker they carry); thread replies with
`reply_in_thread`; private notices as ephemeral cards where Feishu has them. The calls that post
and edit a card, and Feishu's limits, are in cards.py (`FeishuCards`, shared with the answer stream).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator

from bot.core import tenants
from bot.core.chat_platform import Content, Conversation, MessageRef, Notice
from bot.core.models import BotError
from bot.i18n import phrase
from bot.render import feishu as R
from handlers.feishu.api import (
    PERMISSION_CODES,
    RATE_CODES,
    FeishuApi,
    FeishuError,
    GetMessageRequest,
    ListMessageRequest,
)
from handlers.feishu.cards import FeishuCards, send_uuid
from handlers.feishu.stream import AnswerStream

log = logging.getLogger(__name__)

GROUP_MSG_SCOPE = "im:message.group_msg"  # sensitive: group messages without an @-mention
SCOPES_TTL = 600.0  # seconds a scope check is trusted (an admin may grant it meanwhile)
# Reading the chat back (GET /open-apis/im/v1/messages): any one of these, plus im:message.group_msg in groups.
READ_SCOPES = ("im:message", "im:message:readonly", "im:message.history:readonly")
LOOKUP_PAGE_SIZE = 50  # the list API's maximum
LOOKUP_PAGES = 20  # pages read at most when looking for a message sent before
LOOKUP_SKEW = 600  # seconds before the first attempt the chat is read from (clocks differ)


def _marker(base: str, index: int) -> str:
    """The element_id a keyed send puts on its card's first element, to recognise the message when
    the chat is read back (letters, digits, _; starts with a letter; ≤ 20 chars; unique in the card)."""
    return f"dk{base[:14]}_{index}"


def _marked(card: dict, marker: str) -> dict:
    """The card with `marker` as the element_id of its first element that has none (invisible).
    Reading the message back with card_msg_content_type=user_card_content returns the card as sent."""
    elements = (card.get("body") or {}).get("elements") or []
    for i, element in enumerate(elements):
        if isinstance(element, dict) and "element_id" not in element:
            marked = dict(card, body=dict(card["body"], elements=list(elements)))
            marked["body"]["elements"][i] = dict(element, element_id=marker)
            return marked
    return card


class _OutOfReach(FeishuError):
    """The chat has more messages since the send than a lookup reads: it cannot tell."""


def _mark_all(cards: list[dict], base: str) -> list[dict]:
    return [_marked(card, _marker(base, i)) for i, card in enumerate(cards)]


class FeishuPlatform(FeishuCards):
    name = "feishu"
    supports_streaming = True
    supports_buttons = True
    supports_files = False
    # seconds Feishu deduplicates a send's `uuid`: the delivery decides after
    send_dedupe_window: float | None = 3600.0

    def __init__(self, api: FeishuApi, *, default_lang: str = "zh"):
        super().__init__(api, default_lang=default_lang)
        self.ephemeral_ok = True  # False only when Feishu says the app may not send them at all
        self.ephemeral_refused: OrderedDict[str, None] = OrderedDict()  # chats that refused one (topic groups)
        # a self-built app's scopes; a store app's are each tenant's (as is its identity, below)
        self._scopes: tuple[float, dict[str, int] | None] = (0.0, None)
        self._tenant_scopes: dict[str, tuple[float, dict[str, int] | None]] = {}
        self.identities: dict[str | None, tuple[str | None, str | None]] = {}
        self._identity_checked: dict[str | None, float] = {}

    # --- identity -------------------------------------------------------------------------------------
    @property
    def bot_open_id(self) -> str | None:
        return self.identity(None)[0]

    @property
    def bot_name(self) -> str | None:
        return self.identity(None)[1]

    def identity(self, tenant: str | None) -> tuple[str | None, str | None]:
        """(the bot's open_id, its name) as `tenant` knows it (a store app's bot has an open_id per tenant)."""
        return self.identities.get(tenant, (None, None))

    async def ensure_identity(self, tenant: str | None = None) -> None:
        """The bot's own open_id (to recognise its @-mentions) and name, fetched once per tenant."""
        if self.identity(tenant)[0] or time.monotonic() - self._identity_checked.get(tenant, -60.0) < 60:
            return
        self._identity_checked[tenant] = time.monotonic()
        try:
            reply = await self.api.raw("read_identity", "GET", "/open-apis/bot/v3/info", tenant=tenant)
        except BotError as exc:
            log.warning("Feishu bot info unavailable (%s); recognising mentions by type instead", exc)
            return
        bot = reply.get("bot") or {}  # `bot` is top level in this reply, not under `data`
        self.identities[tenant] = (bot.get("open_id") or None, bot.get("app_name") or None)

    # --- ChatPlatform ---------------------------------------------------------------------------------
    async def send(
        self, channel: str, content: Content, *, thread: str | None = None, key: str | None = None
    ) -> MessageRef:
        cards = R.render_cards(content, thread=thread, lang=self.default_lang)
        if not key:
            return await self.post_cards(channel, cards, thread=thread)
        base = R.stable_id("send", channel, key)
        return await self.post_cards(channel, _mark_all(cards, base), thread=thread, base=base)

    async def send_unless_posted(
        self, channel: str, content: Content, *, thread: str | None = None, key: str, since: float
    ) -> MessageRef | None:
        """A keyed send tried at `since` (epoch seconds) whose outcome is unknown, after Feishu
        forgot its `uuid`: read the chat (or the thread) back, and post only the cards of it that
        are not there — found by the element_id each keyed card carries. None when the chat
        cannot be read (a scope missing, more messages since the send than a lookup reads): the
        caller decides without it. A transient failure raises: the push is retried, undecided."""
        cards = R.render_cards(content, thread=thread, lang=self.default_lang)
        base = R.stable_id("send", channel, key)
        marks = [_marker(base, i) for i in range(len(cards))]
        tenant, chat = tenants.split(channel)
        try:
            if thread:
                found = await self._find_marked("thread", await self._thread_id(thread, tenant), marks, tenant=tenant)
            else:
                found = await self._find_marked("chat", chat, marks[:1], since=since, tenant=tenant)
                if 0 in found and len(cards) > 1:  # its continuation cards are in its own thread
                    thread_id = await self._thread_id(found[0], tenant)
                    if thread_id:
                        found.update(await self._find_marked("thread", thread_id, marks[1:], tenant=tenant))
        except FeishuError as exc:
            if exc.code not in PERMISSION_CODES and not isinstance(exc, _OutOfReach):
                raise  # transient: this attempt fails and the push is retried later, still undecided
            why = (
                f"the app lacks the scope to read it back ({' or '.join(READ_SCOPES)}, and {GROUP_MSG_SCOPE} in groups)"
                if exc.code in PERMISSION_CODES
                else str(exc)
            )
            log.warning("cannot check whether a message of %s reached chat %s: %s", key, channel, why)
            return None
        return await self.post_cards(channel, _mark_all(cards, base), thread=thread, base=base, have=found)

    async def _thread_id(self, message_id: str, tenant: str | None) -> str:
        """The thread (omt_…) that replies to `message_id` live in; "" when it has none yet."""
        request = GetMessageRequest.builder().message_id(message_id).build()
        resp = await self.api.call("read_message", self.api.client.im.v1.message.get, request, tenant=tenant)
        items = resp.data.items or []
        return str(items[0].thread_id or "") if items else ""

    async def _find_marked(
        self, kind: str, container: str, marks: list[str], *, since: float | None = None, tenant: str | None = None
    ) -> dict[int, str]:
        """{card index: message_id} of the bot's cards carrying one of `marks`, in a chat (from
        `since`, oldest first) or a thread (newest first), following page_token for a bounded
        number of pages; _OutOfReach when the end was not reached (it might be further on)."""
        found: dict[int, str] = {}
        if not container:
            return found
        token = None
        for _ in range(LOOKUP_PAGES):
            builder = (
                ListMessageRequest.builder()
                .container_id_type(kind)
                .container_id(container)
                .page_size(LOOKUP_PAGE_SIZE)
                .card_msg_content_type("user_card_content")
            )
            if kind == "chat":  # thread containers take no time range
                builder = builder.sort_type("ByCreateTimeAsc").start_time(str(max(0, int(since or 0) - LOOKUP_SKEW)))
            else:
                builder = builder.sort_type("ByCreateTimeDesc")
            if token:
                builder = builder.page_token(token)
            resp = await self.api.call("read_chat", self.api.client.im.v1.message.list, builder.build(), tenant=tenant)
            for item in resp.data.items or []:
                sender = item.sender
                if item.deleted or item.msg_type != "interactive" or not sender or sender.sender_type != "app":
                    continue
                text = (item.body.content if item.body else "") or ""
                for mark in marks:
                    if re.search(re.escape(mark) + r"(?!\d)", text):  # the element_id, however quoted
                        found.setdefault(int(mark.rsplit("_", 1)[1]), str(item.message_id))
            if len(found) == len(marks) or not resp.data.has_more:
                return found
            token = resp.data.page_token
        raise _OutOfReach(f"{LOOKUP_PAGES * LOOKUP_PAGE_SIZE} messages were read back without reaching the end")

    async def update(self, ref: MessageRef, content: Content) -> MessageRef:
        cards = R.render_cards(content, thread=ref.thread_root, lang=self.default_lang)
        await self.patch(ref.id, cards[0], tenant=tenants.tenant_of(ref.channel))
        if len(cards) > 1:  # the rest continues in the message's thread
            base = R.stable_id("update", ref.id, *[R.card_json(c) for c in cards])
            rest = await self.post_cards(ref.channel, cards[1:], thread=ref.thread_root, base=base)
            return MessageRef(ref.channel, ref.id, ref.thread, parts=(ref.id, *(rest.parts or (rest.id,))))
        return ref

    async def revise(self, ref: MessageRef, content: Content) -> bool:
        parts = ref.parts or (ref.id,)
        cards = R.render_cards(content, thread=ref.thread, lang=self.default_lang)
        if len(cards) != len(parts):
            return False  # redrawn it would take more (or fewer) cards: leave it as posted
        for message_id, card in zip(parts, cards):
            await self.patch(message_id, card, tenant=tenants.tenant_of(ref.channel))
        return True

    async def reply_private(self, conv: Conversation, content: Content) -> None:
        """Feishu has no private replies to bot messages in a thread; in a group's main stream a
        short notice goes out as an ephemeral card ("only you can see this"); everything else is
        a reply to the user's message, or into the thread they are in."""
        if (
            isinstance(content, Notice)
            and not conv.is_dm
            and not conv.thread
            and conv.user
            and self.ephemeral_ok
            and conv.channel not in self.ephemeral_refused
        ):
            tenant, chat = tenants.split(conv.channel)
            try:
                await self.api.raw(
                    "send_ephemeral",
                    "POST",
                    "/open-apis/ephemeral/v1/send",
                    {
                        "chat_id": chat,
                        "open_id": tenants.local_id(conv.user),
                        "msg_type": "interactive",
                        "card": R.ephemeral_card(content.text),
                    },
                    limits=self.chats.limits(conv.channel),
                    tenant=tenant,
                )
                return
            except FeishuError as exc:
                if exc.code in PERMISSION_CODES:
                    self.ephemeral_ok = False  # not available to this app anywhere: stop trying
                elif exc.code is not None and exc.code not in RATE_CODES:
                    self._refused_in(conv.channel)  # e.g. a topic group: only this chat
                log.info("ephemeral card refused (%s); replying in the chat instead", exc)
        cards = R.render_cards(content, thread=conv.thread, lang=self.default_lang)
        if conv.thread:
            await self.post_cards(conv.channel, cards, thread=conv.thread)
            return
        quote = conv.extra.get("message_id")
        if quote:
            try:
                await self.post_cards(conv.channel, cards, quote=quote)
                return
            except FeishuError as exc:  # e.g. the user recalled their message meanwhile
                if exc.code in RATE_CODES or exc.code is None:
                    raise
        await self.post_cards(conv.channel, cards)

    def _refused_in(self, chat_id: str) -> None:
        self.ephemeral_refused[chat_id] = None
        self.ephemeral_refused.move_to_end(chat_id)
        while len(self.ephemeral_refused) > 10_000:
            self.ephemeral_refused.popitem(last=False)

    async def direct_channel(self, conv: Conversation) -> str | None:
        """A one-to-one (p2p) chat with the bot is the person's direct conversation: its chat_id."""
        return conv.channel if conv.is_dm else None

    async def reaches(self, channel: str) -> bool:
        # A store app learns of a tenant that removed it only from a refused token: that send
        # fails in one sentence; there is no installation record to ask first.
        return True

    async def config_caveat(self, channel: str, questions: str, lang: str) -> str | None:
        """A sentence to add to the `config` reply when a setting cannot work as configured:
        `questions all` needs the sensitive scope im:message.group_msg, without which Feishu
        delivers only @-mentions from groups. Checked with the scopes API (no scope needed)."""
        if questions != "all":
            return None
        status = await self._scope_status(GROUP_MSG_SCOPE, tenants.tenant_of(channel))
        if status == 1:
            return None
        return R.ft(lang, "scope_unknown" if status is None else "scope_missing", scope=GROUP_MSG_SCOPE)

    async def _scope_status(self, scope: str, tenant: str | None = None) -> int | None:
        """1 granted, 2 not granted (absent: not requested, same thing), None when unknown."""
        checked, scopes = self._scopes if tenant is None else self._tenant_scopes.get(tenant, (0.0, None))
        if scopes is None or time.monotonic() - checked > SCOPES_TTL:
            try:
                reply = await self.api.raw("read_scopes", "GET", "/open-apis/application/v6/scopes", tenant=tenant)
                items = (reply.get("data") or {}).get("scopes") or []
                scopes = {
                    str(i.get("scope_name")): int(i.get("grant_status") or 2) for i in items if isinstance(i, dict)
                }
            except (BotError, ValueError, TypeError, AttributeError) as exc:
                log.warning("could not read the app's scopes (%s)", exc)
                return None
            if tenant is None:
                self._scopes = (time.monotonic(), scopes)
            else:
                self._tenant_scopes[tenant] = (time.monotonic(), scopes)
        return scopes.get(scope, 2)

    async def stream(
        self, channel: str, thread: str, pieces: AsyncIterator[str], *, conv: Conversation | None = None, lang: str = ""
    ) -> MessageRef:
        return await AnswerStream(self, channel, thread, lang).run(pieces)

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        raise BotError(phrase("errors.feishu_no_files"))

    # --- primitives -------------------------------------------------------------------------------------
    async def post_cards(
        self,
        channel: str,
        cards: list[dict],
        *,
        thread: str | None = None,
        quote: str | None = None,
        base: str | None = None,
        have: dict[int, str] | None = None,
    ) -> MessageRef:
        """Post cards in order (held under the chat's lock so nothing overtakes them); the first
        goes top level / into `thread` / as a reply quoting `quote`, the rest into its thread.
        `have`: {index: message_id} of cards already in the chat, not posted again."""
        base = base or uuid.uuid4().hex  # one per logical message, reused by every retry
        have = have or {}
        first: MessageRef | None = MessageRef(channel, have[0], thread or None) if 0 in have else None
        parts: list[str] = []
        async with self.chats.lock(channel):
            for index, card in enumerate(cards):
                if index in have:
                    parts.append(have[index])
                    continue
                content = R.card_json(card)
                if first is None:
                    first = await self.post_card(
                        channel, content, thread=thread, quote=quote, uid=send_uuid(base, index)
                    )
                    parts.append(first.id)
                else:
                    ref = await self.post_card(channel, content, thread=first.thread_root, uid=send_uuid(base, index))
                    parts.append(ref.id)
        assert first is not None
        return MessageRef(first.channel, first.id, first.thread, parts=tuple(parts))

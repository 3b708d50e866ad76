"""Posting and editing Feishu cards at Feishu's pace (`FeishuCards`): the calls the platform's
sends (platform.py) and a streamed answer (stream.py) are both made of. Every send carries a
`uuid` (`send_uuid`), so one retried within the hour never doubles a message. Limits: at most 5
messages/s per chat (shared with every other bot in a group), in order; 5 edits/s per message; 10
CardKit operations/s per card.
"""

from __future__ import annotations

import json

from bot.core import tenants
from bot.core.chat_platform import MessageRef
from bot.render import feishu as R
from handlers.feishu.api import (
    ContentCardElementRequest,
    ContentCardElementRequestBody,
    CreateCardRequest,
    CreateCardRequestBody,
    CreateMessageRequest,
    CreateMessageRequestBody,
    FeishuApi,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
    SettingsCardRequest,
    SettingsCardRequestBody,
)
from handlers.pacing import ConversationPacer

CHAT_LIMIT = (5, 1.0)  # messages per second per chat, shared by all bots in a group
MESSAGE_LIMIT = (5, 1.0)
CARD_LIMIT = (10, 1.0)


def send_uuid(base: str, index: int) -> str:
    """Feishu's send `uuid` (≤ 50 chars; the same uuid within an hour returns the same message)."""
    return f"{base[:40]}-{index}"


class FeishuCards:
    """An app's API client, each chat's, message's and card's pace, and whether CardKit works."""

    def __init__(self, api: FeishuApi, *, default_lang: str = "zh"):
        self.api = api
        self.default_lang = default_lang
        self.chats = ConversationPacer("chat", *CHAT_LIMIT, windows=api.pacer)
        self.messages = ConversationPacer("msg", *MESSAGE_LIMIT, windows=api.pacer)
        self.cards = ConversationPacer("card", *CARD_LIMIT, windows=api.pacer)
        self.cardkit_ok = True  # becomes False when CardKit refuses (e.g. scope cardkit:card:write missing)

    async def post_card(
        self, channel: str, content: str, *, thread: str | None = None, quote: str | None = None, uid: str
    ) -> MessageRef:
        limits = self.chats.limits(channel)
        # A store app's chat is `tenant_key/oc_…`: Feishu gets the bare id, with that tenant's token.
        tenant, chat = tenants.split(channel)
        if thread or quote:
            body = (
                ReplyMessageRequestBody.builder()
                .msg_type("interactive")
                .content(content)
                .reply_in_thread(bool(thread))
                .uuid(uid)
                .build()
            )
            request = ReplyMessageRequest.builder().message_id(thread or quote).request_body(body).build()
            resp = await self.api.call(
                "reply", self.api.client.im.v1.message.reply, request, limits=limits, tenant=tenant
            )
            return MessageRef(channel, resp.data.message_id, thread or None)
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(chat)
            .msg_type("interactive")
            .content(content)
            .uuid(uid)
            .build()
        )
        # a user's open_id (ou_…) is a direct message to that user (downstream conflicts); else a chat
        kind = "open_id" if chat.startswith("ou_") else "chat_id"
        request = CreateMessageRequest.builder().receive_id_type(kind).request_body(body).build()
        resp = await self.api.call(
            "post_message", self.api.client.im.v1.message.create, request, limits=limits, tenant=tenant
        )
        return MessageRef(channel, resp.data.message_id, None)

    async def patch(self, message_id: str, card: dict, *, tenant: str | None = None) -> None:
        body = PatchMessageRequestBody.builder().content(R.card_json(card)).build()
        request = PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        async with self.messages.lock(message_id):
            await self.api.call(
                "update_message",
                self.api.client.im.v1.message.patch,
                request,
                limits=self.messages.limits(message_id),
                tenant=tenant,
            )

    async def create_card(self, card: dict, *, tenant: str | None = None) -> str:
        body = CreateCardRequestBody.builder().type("card_json").data(R.card_json(card)).build()
        request = CreateCardRequest.builder().request_body(body).build()
        resp = await self.api.call("create_card", self.api.client.cardkit.v1.card.create, request, tenant=tenant)
        return resp.data.card_id

    async def set_card_text(self, card_id: str, text: str, sequence: int, *, tenant: str | None = None) -> None:
        body = (
            ContentCardElementRequestBody.builder()
            .content(text)
            .sequence(sequence)
            .uuid(R.stable_id("content", card_id, sequence, length=32))
            .build()
        )
        request = (
            ContentCardElementRequest.builder().card_id(card_id).element_id(R.ANSWER_ELEMENT).request_body(body).build()
        )
        await self.api.call(
            "stream_answer",
            self.api.client.cardkit.v1.card_element.content,
            request,
            limits=self.cards.limits(card_id),
            tenant=tenant,
        )

    async def close_card(self, card_id: str, summary: str, sequence: int, *, tenant: str | None = None) -> None:
        settings = {"config": {"streaming_mode": False, "summary": {"content": R.plain(summary, 60)}}}
        body = (
            SettingsCardRequestBody.builder()
            .settings(json.dumps(settings, ensure_ascii=False))
            .sequence(sequence)
            .uuid(R.stable_id("settings", card_id, sequence, length=32))
            .build()
        )
        request = SettingsCardRequest.builder().card_id(card_id).request_body(body).build()
        await self.api.call(
            "finish_answer",
            self.api.client.cardkit.v1.card.settings,
            request,
            limits=self.cards.limits(card_id),
            tenant=tenant,
        )

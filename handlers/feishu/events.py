"""Inbound Feishu events: `im.message.receive_v1` reduced to what the conversation needs, and
card button callbacks. Every event is acknowledged at once; the work goes to the main loop
(`chat.spawn`), deduplicated on `header.event_id` for 8 hours (Feishu re-pushes events it thinks
were missed, for hours).

Buttons: Ask answers at once with a toast and posts a small form card (one input, one submit
button) into the commit's thread; submitting it replaces the form with a "sent" note (so it
cannot be submitted twice) and asks the core with the typed question. Details and a commit
choice: a toast, then the core posts into the thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bot.conversation.commands.owners import COMMAND as OWNERS
from bot.core import tenants
from bot.core.chat_platform import Content, Conversation, MessageRef, Notice
from bot.i18n import text
from bot.render import feishu as R
from handlers.feishu.api import P2CardActionTrigger, P2CardActionTriggerResponse, P2ImMessageReceiveV1

log = logging.getLogger(__name__)
OWNERS_WORDS = frozenset((OWNERS.name, *OWNERS.aliases))

EVENT_TTL = 8 * 3600  # Feishu re-pushes unacknowledged events for up to ~7 hours
FORM_TTL = 14 * 86400  # an Ask form's context, kept as long as Feishu lets a card be updated


class FeishuBot(Protocol):
    """The Feishu platform as the events use it (handlers/feishu/platform.py's FeishuPlatform):
    who the bot is, and the two sends an event answers with."""

    default_lang: str

    def identity(self, tenant: str | None) -> tuple[str | None, str | None]: ...

    async def ensure_identity(self, tenant: str | None = None) -> None: ...

    async def post_cards(self, channel: str, cards: list[dict], *, thread: str | None = None) -> MessageRef: ...

    async def reply_private(self, conv: Conversation, content: Content) -> None: ...


@dataclass(frozen=True)
class Mention:
    key: str
    open_id: str
    name: str
    kind: str  # user | bot


@dataclass(frozen=True)
class Incoming:
    """An `im.message.receive_v1` event, reduced to what the conversation needs."""

    event_id: str
    message_id: str
    chat_id: str
    chat_type: str  # p2p | group
    root_id: str | None
    sender: str
    sender_type: str
    message_type: str
    content: str
    mentions: tuple[Mention, ...] = ()
    tenant: str | None = None  # the event's tenant_key (header), as Feishu signed it


def incoming_message(data: P2ImMessageReceiveV1) -> Incoming | None:
    event = data.event
    if event is None or event.message is None:
        return None
    m, sender = event.message, event.sender
    sender_id = getattr(getattr(sender, "sender_id", None), "open_id", None) or ""
    mentions = tuple(
        Mention(x.key or "", getattr(x.id, "open_id", None) or "", x.name or "", x.mentioned_type or "user")
        for x in (m.mentions or [])
    )
    return Incoming(
        event_id=(data.header.event_id if data.header else "") or "",
        message_id=m.message_id or "",
        chat_id=m.chat_id or "",
        chat_type=m.chat_type or "group",
        root_id=m.root_id or None,
        sender=sender_id,
        sender_type=getattr(sender, "sender_type", "") or "",
        message_type=m.message_type or "",
        content=m.content or "{}",
        mentions=mentions,
        tenant=(data.header.tenant_key if data.header else None) or None,
    )


def message_text(msg: Incoming, bot_open_id: str | None, keep_ids: bool = False) -> tuple[str | None, bool]:
    """(the text with the bot's @-mention removed and other mentions as @Name, was the bot
    mentioned). None for messages that carry no text (images, files, stickers). `keep_ids`: other
    mentions as `<at user_id="ou_…"></at>` instead, for a command that maps people (`owners map`)."""
    try:
        body = json.loads(msg.content)
    except ValueError:
        return None, False
    if not isinstance(body, dict):  # JSON, but not the object Feishu sends
        return None, False
    if msg.message_type == "text":
        text = str(body.get("text", ""))
    elif msg.message_type == "post":
        text = _post_text(body)
    else:
        return None, False
    mentioned = False
    for mention in msg.mentions:
        ours = mention.open_id == bot_open_id if bot_open_id else mention.kind == "bot"
        mentioned = mentioned or ours
        other = f'<at user_id="{mention.open_id}"></at>' if keep_ids and mention.open_id else f"@{mention.name}"
        text = text.replace(mention.key, "" if ours else other)
    return " ".join(text.split()), mentioned


def _post_text(body: dict) -> str:
    """Rich-text ("post") messages: the text, links' text, code and @-placeholders, in order."""
    if "content" not in body:  # some payloads are keyed by language
        body = next((v for v in body.values() if isinstance(v, dict) and "content" in v), {})
    lines = []
    for paragraph in body.get("content") or []:
        words = []
        for node in paragraph if isinstance(paragraph, list) else []:
            if not isinstance(node, dict):  # not a node Feishu sends: skipped, the rest still read
                continue
            tag = node.get("tag")
            if tag in ("text", "a", "code_block", "md"):
                words.append(str(node.get("text", "")))
            elif tag == "at":
                words.append(str(node.get("user_id", "")))
        lines.append("".join(words))
    return "\n".join([body.get("title") or ""] + lines).strip()


class FeishuEvents:
    """Turns SDK events into conversation calls. The SDK calls these handlers synchronously
    (in the HTTP handler, or on the long connection's own thread): they only hand the work to
    the main loop and return, well within Feishu's 3 seconds."""

    def __init__(
        self, chat, platform: FeishuBot, loop: asyncio.AbstractEventLoop | None, *, multi_tenant: bool = False
    ):
        self.chat = chat
        self.platform = platform
        self.loop = loop
        # A store app serves many tenants: chats and people become `tenant_key/oc_…`, `tenant_key/ou_…`
        # (bot/core/tenants.py), qualified from the verified event's tenant_key and nothing else.
        self.multi_tenant = multi_tenant
        self.chat_types: OrderedDict[str, str] = OrderedDict()  # chat_id → p2p | group, as seen

    # --- SDK callbacks (sync) ---------------------------------------------------------------------------
    def on_message(self, data: P2ImMessageReceiveV1) -> None:
        try:
            msg = incoming_message(data)
        except Exception:  # a payload we cannot read must not become the SDK's 500
            log.exception("unreadable im.message.receive_v1 event")
            return
        if msg is not None and self._tenant_ok(msg.tenant, msg.event_id, "message"):
            self.hand_off(self.handle_message(msg))

    def on_card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        try:
            return self._card_action(data)
        except Exception:
            log.exception("unreadable card.action.trigger callback")
            return P2CardActionTriggerResponse({})

    def _tenant_ok(self, tenant: str | None, event_id: str, kind: str) -> bool:
        """A store app's event must name its tenant: without one it could only be answered with a
        guess at some tenant's token and data, so it is refused (one line)."""
        if self.multi_tenant and not tenant:
            log.warning("Feishu %s event %s refused: a store app's event without a tenant_key", kind, event_id or "-")
            return False
        return True

    def _tenant(self, tenant: str | None) -> str | None:
        return tenant if self.multi_tenant else None

    def hand_off(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` as a tracked job on the main loop, from whichever thread the SDK called us."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self.loop or running
        if loop is None:
            coro.close()
            log.error("Feishu event dropped: the adapter was not started")
            return
        self.loop = loop
        if running is loop:
            self.chat.spawn(_safely(coro))
        else:
            asyncio.run_coroutine_threadsafe(self._adopt(coro), loop)

    async def _adopt(self, coro: Awaitable) -> None:
        self.chat.spawn(_safely(coro))

    # --- messages ----------------------------------------------------------------------------------------
    async def handle_message(self, msg: Incoming) -> None:
        if msg.sender_type == "app" or not msg.chat_id:
            return  # bots (ourselves included) are not users
        if not await self.chat.first_time("feishu", msg.event_id, EVENT_TTL):
            return
        tenant = self._tenant(msg.tenant)
        await self.platform.ensure_identity(tenant)
        bot_open_id, bot_name = self.platform.identity(tenant)
        if msg.sender and msg.sender == bot_open_id:
            return
        chat_id = tenants.qualify(tenant, msg.chat_id)
        self._remember_chat(chat_id, msg.chat_type)
        text, mentioned = message_text(msg, bot_open_id)
        if text is None:
            return
        is_dm = msg.chat_type == "p2p"
        conv = Conversation(
            platform="feishu",
            channel=chat_id,
            user=_qualified(tenant, msg.sender),
            thread=msg.root_id,
            is_dm=is_dm,
            extra={"message_id": msg.message_id, "chat_type": msg.chat_type},
        )
        prefix = f"@{bot_name}" if bot_name else "@bot"
        if msg.root_id is None:
            if not (mentioned or is_dm):
                return  # group chatter not addressed to the bot
            if self.chat.looks_like_command(text):
                if text.split()[0].lower() in OWNERS_WORDS:  # `owners map @org/team @someone`: who, by id
                    text = message_text(msg, bot_open_id, keep_ids=True)[0] or text
                return await self.chat.submit("command", conv, text=text, prefix=prefix)
        await self.chat.submit("message", conv, text=text, mentioned=mentioned, prefix=prefix)

    def _remember_chat(self, chat_id: str, chat_type: str) -> None:
        self.chat_types[chat_id] = chat_type
        self.chat_types.move_to_end(chat_id)
        while len(self.chat_types) > 10_000:
            self.chat_types.popitem(last=False)

    # --- card buttons ------------------------------------------------------------------------------------
    def _card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        event = data.event
        action = event.action if event else None
        value = dict(action.value or {}) if action and isinstance(action.value, dict) else {}
        lang = value.get("lang")
        if lang not in ("zh", "en"):
            lang = self.platform.default_lang
        kind = value.get("action")
        context = event.context if event else None
        event_id = (data.header.event_id if data.header else "") or ""
        tenant = (data.header.tenant_key if data.header else None) or None
        if not self._tenant_ok(tenant, event_id, "card action"):
            return _toast("warning", R.ft(lang, "toast_unknown"))
        tenant = self._tenant(tenant)
        chat_id = _qualified(tenant, getattr(context, "open_chat_id", None) or "")
        clicked = getattr(context, "open_message_id", None) or ""
        user = _qualified(tenant, getattr(getattr(event, "operator", None), "open_id", None) or "")
        form_value = (action.form_value if action and isinstance(action.form_value, dict) else None) or {}
        if not value and "question" in form_value and chat_id and clicked:
            # A form submitted without its button's value (Feishu sometimes drops it): the form's
            # context was kept in Redis under the form message's id when it was posted.
            question = str(form_value.get("question") or "").strip()
            if not question:
                return _toast("warning", R.ft(lang, "toast_empty"))
            conv = self._clicked_in(chat_id, user, clicked)
            self.hand_off(self._once(event_id, self._submit_saved_form(conv, clicked, question)))
            return P2CardActionTriggerResponse(
                {
                    "toast": {"type": "success", "content": R.ft(lang, "toast_answer")},
                    "card": {"type": "raw", "data": R.form_submitted_card(lang)},
                }
            )
        if not chat_id or kind not in ("ask", "ask_submit", "details", "choose", "level"):
            return _toast("warning", R.ft(lang, "toast_unknown"))
        if kind == "level":
            # The core checks the commit against what the clicked card showed (its message id);
            # the answer is an ephemeral card in the chat (thread None), the card is patched.
            tap = {"sha": value.get("sha"), "dir": value.get("dir"), "lang": lang, "message": clicked}
            conv = self._clicked_in(chat_id, user, clicked)
            self.hand_off(self._once(event_id, self.chat.submit("action", conv, action="level", value=tap)))
            return _toast("info", text(lang, "levels.toast"))
        conv = Conversation(
            platform="feishu",
            channel=chat_id,
            user=user,
            thread=value.get("thread") or None,
            is_dm=self.chat_types.get(chat_id) == "p2p",
            extra={"message_id": clicked},
        )
        if kind == "ask":
            self.hand_off(self._once(event_id, self._ask_form(conv, value, clicked, lang)))
            return _toast("info", R.ft(lang, "toast_ask"))
        if kind == "ask_submit":
            question = str(form_value.get("question") or "").strip()
            if not question:
                return _toast("warning", R.ft(lang, "toast_empty"))
            payload = {k: v for k, v in value.items() if k != "action"}
            self.hand_off(self._once(event_id, self._action(conv, "ask", payload, question)))
            return P2CardActionTriggerResponse(
                {
                    "toast": {"type": "success", "content": R.ft(lang, "toast_answer")},
                    "card": {"type": "raw", "data": R.form_submitted_card(lang)},
                }
            )
        self.hand_off(self._once(event_id, self._action(conv, kind, value)))
        return _toast("info", R.ft(lang, "toast_details" if kind == "details" else "toast_answer"))

    async def _once(self, event_id: str, coro: Coroutine[Any, Any, Any]) -> None:
        if await self.chat.first_time("feishu", event_id, EVENT_TTL):
            await coro
        else:
            coro.close()

    async def _ask_form(self, conv: Conversation, value: dict, clicked: str, lang: str) -> None:
        card = R.ask_form_card(value, lang)
        thread = conv.thread or clicked
        ref = await self.platform.post_cards(conv.channel, [card], thread=thread)
        context = {**{k: v for k, v in value.items() if k != "action"}, "thread": thread}
        await self.chat.store.set_json(self._form_key(conv.channel, ref.id), context, ttl=FORM_TTL)

    def _clicked_in(self, chat_id: str, user: str, clicked: str) -> Conversation:
        """The conversation of a click on a card: answered in the chat (no thread), the clicked
        card's message id kept for the core's checks and patches."""
        return Conversation(
            platform="feishu",
            channel=chat_id,
            user=user,
            thread=None,
            is_dm=self.chat_types.get(chat_id) == "p2p",
            extra={"message_id": clicked},
        )

    def _form_key(self, channel: str, message_id: str) -> str:
        """An Ask form's saved context, under its tenant too: a click of tenant B naming a form
        message of tenant A finds nothing."""
        return self.chat.store.k("feishu", "form", tenants.qualify(tenants.tenant_of(channel), message_id))

    async def _submit_saved_form(self, conv: Conversation, form_message: str, question: str) -> None:
        context = await self.chat.store.get_json(self._form_key(conv.channel, form_message))
        if not isinstance(context, dict):
            lang = self.platform.default_lang
            await self.platform.reply_private(conv, Notice(R.ft(lang, "form_expired"), "error", lang))
            return
        conv = replace(conv, thread=context.get("thread") or None)
        await self._action(conv, "ask", context, question)

    async def _action(self, conv: Conversation, action: str, value: dict, question: str | None = None) -> None:
        root = conv.thread  # every caller took it from the value's (or the saved form's) thread
        info = await self.chat.threads.get("feishu", conv.channel, root) if root else None
        if info is not None:  # the thread knows the repository as commands name it (a path, owner/name)
            value = {**value, "repo": info.repo}
        await self.chat.submit("action", conv, action=action, value=value, question=question)


def _qualified(tenant: str | None, local: str) -> str:
    """`tenant/local` (bare without a tenant); "" stays "" (nothing to qualify)."""
    return tenants.qualify(tenant, local) if local else ""


def cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel()


def _toast(kind: str, text: str) -> P2CardActionTriggerResponse:
    return P2CardActionTriggerResponse({"toast": {"type": kind, "content": text}})


async def _safely(coro: Awaitable) -> None:
    try:
        await coro
    except asyncio.CancelledError:
        raise
    except Exception:  # the conversation core reports to users itself; this is the last resort
        log.exception("a Feishu event could not be handled")

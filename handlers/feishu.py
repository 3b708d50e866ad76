"""Feishu/Lark adapter: SDK payloads in → `bot.chat` calls → Feishu API calls out.

The only module that imports lark_oapi (it takes seconds to import, so `bot.runner` imports this
module only when Feishu is configured).

  receive   FEISHU_MODE=ws: the SDK's long connection (`lark.ws.Client`) in its own thread with
            its own event loop; FEISHU_MODE=http: `POST /feishu/events` on the shared aiohttp
            server, checked by us first (encryption, signature, a fresh timestamp, the
            verification token) and only then handed to the SDK's dispatcher.
  dispatch  every event is acknowledged at once; the work goes to the main loop
            (`chat.spawn`), deduplicated on `header.event_id` for 8 hours (Feishu re-pushes
            events it thinks were missed, for hours).
  send      interactive cards (bot.render.feishu), always with a `uuid` so a retried send never
            doubles a message; thread replies with `reply_in_thread`; answers stream into a
            CardKit card, or into a card edited with `message.patch` when CardKit is unavailable.
  buttons   Ask: the callback answers at once with a toast and posts a small form card (one
            input, one submit button) into the commit's thread; submitting it replaces the form
            with a "sent" note (so it cannot be submitted twice) and asks the core with the typed
            question — the question is typed where the answer will appear, with no @-mention to
            remember. Details and a commit choice: a toast, then the core posts into the thread.
  private   Feishu has no ephemeral replies in threads: notices for one user in a group's main
            stream use the ephemeral-card API ("only you can see this"); elsewhere, or when that
            API is refused, a reply quoting the user's message (or in their thread).
  limits    ours: at most 5 messages/s per chat (shared with every other bot in a group), in
            order; 5 edits/s per message; 10 CardKit operations/s per card; 50 calls/s per app.
            HTTP 429 / code 99991400 waits `x-ogw-ratelimit-reset` and retries; other transient
            failures back off; a final failure is one sentence (never a token or the secret).
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import random
import threading
import time
import uuid
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import AsyncIterator, Awaitable, Callable, Mapping

import lark_oapi as lark
from aiohttp import web
from lark_oapi.api.cardkit.v1 import (ContentCardElementRequest, ContentCardElementRequestBody, CreateCardRequest,
                                      CreateCardRequestBody, SettingsCardRequest, SettingsCardRequestBody)
from lark_oapi.api.im.v1 import (CreateMessageRequest, CreateMessageRequestBody, P2ImMessageReceiveV1,
                                 PatchMessageRequest, PatchMessageRequestBody, ReplyMessageRequest,
                                 ReplyMessageRequestBody)
from lark_oapi.core.exception import ObtainAccessTokenException
from lark_oapi.core.utils import AESCipher
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger, P2CardActionTriggerResponse

from bot.commands import looks_like_command
from bot.models import BotError
from bot.platform import Content, Conversation, MessageRef, Notice
from bot.render import feishu as R
from settings import ConfigError

log = logging.getLogger(__name__)

EVENT_TTL = 8 * 3600  # Feishu re-pushes unacknowledged events for up to ~7 hours
MAX_SKEW = 300  # seconds: older (or future) signed callbacks are replays
HANDLED_EVENTS = frozenset({"im.message.receive_v1", "card.action.trigger"})
RATE_CODES = frozenset({99991400, 230020, 11232})  # gateway, per-chat, per-tenant message limits
MAX_TRANSIENT = 5  # attempts for 5xx / connection failures
MAX_THROTTLED = 10  # waits for a rate-limit reset before giving up
MAX_RESET_WAIT = 60.0
STREAM_INTERVAL = 0.1  # CardKit: ≤ 10 operations per second per card
PATCH_INTERVAL = 0.25  # message.patch: ≤ 5 edits per second per message
CHAT_LIMIT = (5, 1.0)  # messages per second per chat, shared by all bots in a group
MESSAGE_LIMIT = (5, 1.0)
CARD_LIMIT = (10, 1.0)
APP_LIMITS = (("app:s", 50, 1.0), ("app:min", 1000, 60.0))
TS_HEADER, NONCE_HEADER, SIG_HEADER = "X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature"


class FeishuError(BotError):
    """Feishu refused a call (after retries where retrying made sense)."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.code = code


# --- pacing ----------------------------------------------------------------------------------------

class Pacer:
    """Sliding-window limits: at most n calls per `per` seconds for each key. Single event loop,
    so checking and recording happen without an await in between (no lock needed)."""

    def __init__(self) -> None:
        self._windows: dict[str, deque] = {}

    async def acquire(self, limits) -> None:
        while True:
            now = time.monotonic()
            wait = 0.0
            for key, n, per in limits:
                window = self._windows.setdefault(key, deque())
                while window and now - window[0] >= per:
                    window.popleft()
                if len(window) >= n:
                    wait = max(wait, per - (now - window[0]))
            if wait <= 0:
                for key, _n, _per in limits:
                    self._windows[key].append(now)
                self._prune(now)
                return
            await asyncio.sleep(wait)

    def _prune(self, now: float) -> None:
        if len(self._windows) > 5000:
            for key in [k for k, w in self._windows.items() if not w or now - w[-1] > 60]:
                del self._windows[key]


class KeyedLocks:
    """One asyncio.Lock per key (a chat, a message): keeps sends to one place in order."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def get(self, key: str) -> asyncio.Lock:
        if len(self._locks) > 2000:
            for k in [k for k, lock in self._locks.items() if not lock.locked()]:
                del self._locks[k]
        return self._locks.setdefault(key, asyncio.Lock())


# --- calling the API -------------------------------------------------------------------------------

class FeishuApi:
    """Runs SDK calls (blocking `requests` underneath, including the token fetch) in a small
    thread pool, paced, with our retry policy: the SDK itself neither retries nor raises."""

    def __init__(self, client: lark.Client, executor: ThreadPoolExecutor, pacer: Pacer, *,
                 max_throttled: int = MAX_THROTTLED, max_transient: int = MAX_TRANSIENT):
        self.client = client
        self.executor = executor
        self.pacer = pacer
        self.max_throttled = max_throttled  # rate-limit waits per call before giving up
        self.max_transient = max_transient  # attempts per call on 5xx / connection failures

    async def call(self, what: str, fn: Callable, request, *, limits=()) -> object:
        loop = asyncio.get_running_loop()
        transient = throttled = 0
        while True:
            await self.pacer.acquire(tuple(limits) + APP_LIMITS)
            try:
                resp = await loop.run_in_executor(self.executor, fn, request)
            except ObtainAccessTokenException as exc:
                if exc.code in RATE_CODES and throttled < self.max_throttled:
                    throttled += 1
                    await asyncio.sleep(_backoff(throttled))
                    continue
                raise FeishuError(f"Feishu refused the app credentials (code {exc.code}: {exc.msg}); "
                                  f"check FEISHU_APP_ID and FEISHU_APP_SECRET.", exc.code) from None
            except Exception as exc:  # connection refused/reset, timeout, a non-JSON gateway page
                transient += 1
                if transient >= self.max_transient:
                    raise FeishuError(f"Feishu could not be reached to {what} ({type(exc).__name__}).") from None
                await asyncio.sleep(_backoff(transient))
                continue
            raw = getattr(resp, "raw", None)
            status = getattr(raw, "status_code", None) or 200
            code = resp.code if resp.code is not None else (0 if status < 400 else -1)
            if status == 429 or code in RATE_CODES:
                throttled += 1
                if throttled > self.max_throttled:
                    raise FeishuError(f"Feishu kept rate-limiting the bot, so it could not {what}.", code)
                await asyncio.sleep(_reset_wait(getattr(raw, "headers", None) or {}, throttled))
                continue
            if code == 0 and status < 400:
                return resp
            if status >= 500 and transient + 1 < self.max_transient:
                transient += 1
                await asyncio.sleep(_backoff(transient))
                continue
            log.warning("Feishu refused to %s: HTTP %s, code %s, %s", what, status, code, resp.msg)
            raise FeishuError(f"Feishu refused to {what} (code {code}: {resp.msg or 'no message'}).", code)

    async def raw(self, what: str, method: str, uri: str, body: dict | None = None, *, limits=()) -> dict:
        """A call the SDK has no method for; returns the whole JSON reply."""
        request = lark.BaseRequest.builder().http_method(getattr(lark.HttpMethod, method)).uri(uri) \
            .token_types({lark.AccessTokenType.TENANT}).build()
        if body is not None:
            request.body = body
            request.headers = {"Content-Type": "application/json; charset=utf-8"}
        resp = await self.call(what, self.client.request, request, limits=limits)
        try:
            return json.loads(resp.raw.content or b"{}")
        except ValueError:
            raise FeishuError(f"Feishu answered something unreadable when asked to {what}.") from None


def _backoff(attempt: int) -> float:
    return min(8.0, 0.25 * 2 ** (attempt - 1)) * (0.75 + random.random() / 2)


def _reset_wait(headers: Mapping[str, str], attempt: int) -> float:
    """Seconds until the rate-limit window resets (`x-ogw-ratelimit-reset`), else a backoff."""
    value = next((v for k, v in headers.items() if k.lower() == "x-ogw-ratelimit-reset"), None)
    try:
        return min(MAX_RESET_WAIT, max(0.05, float(value)))
    except (TypeError, ValueError):
        return _backoff(attempt)


def _uuid(base: str, index: int) -> str:
    """Feishu's send `uuid` (≤ 50 chars; the same uuid within an hour returns the same message)."""
    return f"{base[:40]}-{index}"


# --- the platform ------------------------------------------------------------------------------------

@dataclass
class _Segment:
    """One card of a streamed answer: a CardKit card (`card_id`) or a patched message."""
    ref: MessageRef
    start: int  # where in the whole answer this card's text begins
    opener: str = ""  # a code fence reopened at the top of this card
    card_id: str | None = None
    sequence: int = 0
    shown: str = ""


class FeishuPlatform:
    name = "feishu"
    supports_streaming = True
    supports_buttons = True
    supports_files = False

    def __init__(self, api: FeishuApi, *, default_lang: str = "zh"):
        self.api = api
        self.default_lang = default_lang
        self.chat_locks = KeyedLocks()
        self.message_locks = KeyedLocks()
        self.cardkit_ok = True  # becomes False when CardKit refuses (e.g. scope cardkit:card:write missing)
        self.ephemeral_ok = True
        self.bot_open_id: str | None = None
        self.bot_name: str | None = None
        self._identity_checked = 0.0

    # --- identity -------------------------------------------------------------------------------------
    async def ensure_identity(self) -> None:
        """The bot's own open_id (to recognise its @-mentions) and name, fetched once."""
        if self.bot_open_id or time.monotonic() - self._identity_checked < 60:
            return
        self._identity_checked = time.monotonic()
        try:
            reply = await self.api.raw("read the bot's identity", "GET", "/open-apis/bot/v3/info")
        except BotError as exc:
            log.warning("Feishu bot info unavailable (%s); recognising mentions by type instead", exc)
            return
        bot = reply.get("bot") or {}  # `bot` is top level in this reply, not under `data`
        self.bot_open_id = bot.get("open_id") or None
        self.bot_name = bot.get("app_name") or None

    # --- ChatPlatform ---------------------------------------------------------------------------------
    async def send(self, channel: str, content: Content, *, thread: str | None = None,
                   key: str | None = None) -> MessageRef:
        cards = R.render_cards(content, thread=thread, lang=self.default_lang)
        base = R.stable_id("send", channel, key) if key else uuid.uuid4().hex
        return await self.post_cards(channel, cards, thread=thread, base=base)

    async def update(self, ref: MessageRef, content: Content) -> MessageRef:
        cards = R.render_cards(content, thread=ref.thread_root, lang=self.default_lang)
        await self.patch(ref.id, cards[0])
        if len(cards) > 1:  # the rest continues in the message's thread
            base = R.stable_id("update", ref.id, *[R.card_json(c) for c in cards])
            await self.post_cards(ref.channel, cards[1:], thread=ref.thread_root, base=base)
        return ref

    async def reply_private(self, conv: Conversation, content: Content) -> None:
        """Feishu has no private replies to bot messages in a thread; in a group's main stream a
        short notice goes out as an ephemeral card ("only you can see this"); everything else is
        a reply to the user's message, or into the thread they are in."""
        if isinstance(content, Notice) and not conv.is_dm and not conv.thread and self.ephemeral_ok and conv.user:
            try:
                await self.api.raw("send an ephemeral card", "POST", "/open-apis/ephemeral/v1/send",
                                   {"chat_id": conv.channel, "open_id": conv.user, "msg_type": "interactive",
                                    "card": R.ephemeral_card(content.text)},
                                   limits=[(f"chat:{conv.channel}",) + CHAT_LIMIT])
                return
            except FeishuError as exc:
                if exc.code is not None and exc.code not in RATE_CODES:
                    self.ephemeral_ok = False  # not available to this app: stop trying
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

    async def stream(self, channel: str, thread: str, pieces: AsyncIterator[str], *,
                     conv: Conversation | None = None, lang: str = "") -> MessageRef:
        return await AnswerStream(self, channel, thread, lang).run(pieces)

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        raise BotError("Sending files is not supported on Feishu; the digest is in the cards.")

    # --- primitives -------------------------------------------------------------------------------------
    async def post_cards(self, channel: str, cards: list[dict], *, thread: str | None = None,
                         quote: str | None = None, base: str | None = None) -> MessageRef:
        """Post cards in order (held under the chat's lock so nothing overtakes them); the first
        goes top level / into `thread` / as a reply quoting `quote`, the rest into its thread."""
        base = base or uuid.uuid4().hex  # one per logical message, reused by every retry
        first: MessageRef | None = None
        async with self.chat_locks.get(channel):
            for index, card in enumerate(cards):
                content = R.card_json(card)
                if first is None:
                    first = await self._post(channel, content, thread=thread, quote=quote, uid=_uuid(base, index))
                else:
                    await self._post(channel, content, thread=first.thread_root, uid=_uuid(base, index))
        assert first is not None
        return first

    async def _post(self, channel: str, content: str, *, thread: str | None = None, quote: str | None = None,
                    uid: str) -> MessageRef:
        limits = [(f"chat:{channel}",) + CHAT_LIMIT]
        if thread or quote:
            body = ReplyMessageRequestBody.builder().msg_type("interactive").content(content) \
                .reply_in_thread(bool(thread)).uuid(uid).build()
            request = ReplyMessageRequest.builder().message_id(thread or quote).request_body(body).build()
            resp = await self.api.call("reply in the chat", self.api.client.im.v1.message.reply, request, limits=limits)
            return MessageRef(channel, resp.data.message_id, thread or None)
        body = CreateMessageRequestBody.builder().receive_id(channel).msg_type("interactive") \
            .content(content).uuid(uid).build()
        request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
        resp = await self.api.call("post a message", self.api.client.im.v1.message.create, request, limits=limits)
        return MessageRef(channel, resp.data.message_id, None)

    async def patch(self, message_id: str, card: dict) -> None:
        body = PatchMessageRequestBody.builder().content(R.card_json(card)).build()
        request = PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        async with self.message_locks.get(message_id):
            await self.api.call("update a message", self.api.client.im.v1.message.patch, request,
                                limits=[(f"msg:{message_id}",) + MESSAGE_LIMIT])

    async def create_card(self, card: dict) -> str:
        body = CreateCardRequestBody.builder().type("card_json").data(R.card_json(card)).build()
        request = CreateCardRequest.builder().request_body(body).build()
        resp = await self.api.call("create a streaming card", self.api.client.cardkit.v1.card.create, request)
        return resp.data.card_id

    async def set_card_text(self, card_id: str, text: str, sequence: int) -> None:
        body = ContentCardElementRequestBody.builder().content(text).sequence(sequence) \
            .uuid(R.stable_id("content", card_id, sequence, length=32)).build()
        request = ContentCardElementRequest.builder().card_id(card_id).element_id(R.ANSWER_ELEMENT) \
            .request_body(body).build()
        await self.api.call("stream an answer", self.api.client.cardkit.v1.card_element.content, request,
                            limits=[(f"card:{card_id}",) + CARD_LIMIT])

    async def close_card(self, card_id: str, summary: str, sequence: int) -> None:
        settings = {"config": {"streaming_mode": False, "summary": {"content": R.plain(summary, 60)}}}
        body = SettingsCardRequestBody.builder().settings(json.dumps(settings, ensure_ascii=False)) \
            .sequence(sequence).uuid(R.stable_id("settings", card_id, sequence, length=32)).build()
        request = SettingsCardRequest.builder().card_id(card_id).request_body(body).build()
        await self.api.call("finish a streamed answer", self.api.client.cardkit.v1.card.settings, request,
                            limits=[(f"card:{card_id}",) + CARD_LIMIT])


class AnswerStream:
    """An answer streamed into the thread: a CardKit card in streaming mode whose text element is
    replaced with the whole text so far (at most every 0.1 s; pieces arriving in between are
    coalesced), closed at the end. Without CardKit: a normal card edited at most every 0.25 s.
    A long answer continues on further cards (each ≤ 30 KB); nothing is cut."""

    def __init__(self, platform: FeishuPlatform, channel: str, thread: str, lang: str = ""):
        self.p = platform
        self.channel = channel
        self.thread = thread
        self.lang = lang or platform.default_lang

    async def run(self, pieces: AsyncIterator[str]) -> MessageRef:
        state = {"text": "", "done": False}
        changed = asyncio.Event()

        async def read() -> None:
            try:
                async for piece in pieces:
                    state["text"] += piece
                    changed.set()
            finally:
                state["done"] = True
                changed.set()

        reader = asyncio.create_task(read())
        try:
            try:  # the core usually has the first piece already: start the card with it
                await asyncio.wait_for(changed.wait(), timeout=0.5)
            except asyncio.TimeoutError:
                pass
            segment = await self._open(0, "", state["text"])
            first = segment.ref
            last = time.monotonic()
            while True:
                if segment.shown == segment.opener + state["text"][segment.start:]:
                    if state["done"]:
                        break
                    changed.clear()  # nothing new to show: wait for the next piece
                    await changed.wait()
                    continue
                pause = self._interval(segment) - (time.monotonic() - last)
                if pause > 0 and not state["done"]:
                    await asyncio.sleep(pause)  # let more pieces gather: one update carries them all
                segment = await self._show(segment, state["text"])
                last = time.monotonic()
            await self._close(segment)
            await reader  # an error while producing the answer surfaces after what we had is shown
            return first
        finally:
            if not reader.done():
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    def _interval(self, segment: _Segment) -> float:
        return STREAM_INTERVAL if segment.card_id else PATCH_INTERVAL

    async def _open(self, start: int, opener: str, text: str) -> _Segment:
        raw = opener + text[start:]
        raw = raw[:R.answer_cut(raw)] if raw else raw
        if self.p.cardkit_ok:
            try:
                card_id = await self.p.create_card(R.answer_card(raw, streaming=True, lang=self.lang))
            except FeishuError as exc:
                if exc.code in RATE_CODES:
                    raise
                self.p.cardkit_ok = False
                log.warning("CardKit unavailable (%s); streaming answers by editing messages instead", exc)
            else:
                content = json.dumps({"type": "card", "data": {"card_id": card_id}})
                ref = await self._post(content)
                return _Segment(ref, start, opener, card_id=card_id, sequence=0, shown=raw)
        ref = await self._post(R.card_json(R.answer_card(raw, streaming=False, lang=self.lang)))
        return _Segment(ref, start, opener, shown=raw)

    async def _post(self, content: str) -> MessageRef:
        async with self.p.chat_locks.get(self.channel):
            return await self.p._post(self.channel, content, thread=self.thread, uid=_uuid(uuid.uuid4().hex, 0))

    async def _show(self, segment: _Segment, text: str) -> _Segment:
        raw = segment.opener + text[segment.start:]
        while not R.answer_fits(raw):
            cut = R.answer_cut(raw)
            await self._set(segment, raw[:cut])
            await self._close(segment)
            consumed = max(1, cut - len(segment.opener))
            segment = await self._open(segment.start + consumed, R.fence_opener(raw[:cut]), text)
            raw = segment.opener + text[segment.start:]
        await self._set(segment, raw)
        return segment

    async def _set(self, segment: _Segment, raw: str) -> None:
        if raw == segment.shown:
            return
        if segment.card_id:
            try:
                segment.sequence += 1
                await self.p.set_card_text(segment.card_id, R.md_escape(raw), segment.sequence)
                segment.shown = raw
                return
            except FeishuError as exc:  # e.g. the card's streaming window expired: go on without CardKit
                if exc.code in RATE_CODES:
                    raise
                log.warning("CardKit update failed (%s); continuing the answer in an edited message", exc)
                replacement = await self._post(R.card_json(R.answer_card(raw, streaming=False, lang=self.lang)))
                segment.ref, segment.card_id, segment.shown = replacement, None, raw
                return
        await self.p.patch(segment.ref.id, R.answer_card(raw, streaming=False, lang=self.lang))
        segment.shown = raw

    async def _close(self, segment: _Segment) -> None:
        if segment.card_id:
            segment.sequence += 1
            try:
                await self.p.close_card(segment.card_id, segment.shown, segment.sequence)
            except FeishuError as exc:  # the text is complete; Feishu ends streaming mode by itself later
                log.warning("could not close a streaming card: %s", exc)


# --- inbound events ----------------------------------------------------------------------------------

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


def incoming_message(data: P2ImMessageReceiveV1) -> Incoming | None:
    event = data.event
    if event is None or event.message is None:
        return None
    m, sender = event.message, event.sender
    sender_id = getattr(getattr(sender, "sender_id", None), "open_id", None) or ""
    mentions = tuple(Mention(x.key or "", getattr(x.id, "open_id", None) or "", x.name or "", x.mentioned_type or "user")
                     for x in (m.mentions or []))
    return Incoming(event_id=(data.header.event_id if data.header else "") or "", message_id=m.message_id or "",
                    chat_id=m.chat_id or "", chat_type=m.chat_type or "group", root_id=m.root_id or None,
                    sender=sender_id, sender_type=getattr(sender, "sender_type", "") or "",
                    message_type=m.message_type or "", content=m.content or "{}", mentions=mentions)


def message_text(msg: Incoming, bot_open_id: str | None) -> tuple[str | None, bool]:
    """(the text with the bot's @-mention removed and other mentions as @Name, was the bot
    mentioned). None for messages that carry no text (images, files, stickers)."""
    try:
        body = json.loads(msg.content)
    except ValueError:
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
        text = text.replace(mention.key, "" if ours else f"@{mention.name}")
    return " ".join(text.split()), mentioned


def _post_text(body: dict) -> str:
    """Rich-text ("post") messages: the text, links' text, code and @-placeholders, in order."""
    if "content" not in body:  # some payloads are keyed by language
        body = next((v for v in body.values() if isinstance(v, dict) and "content" in v), {})
    lines = []
    for paragraph in body.get("content") or []:
        words = []
        for node in paragraph or []:
            tag = node.get("tag")
            if tag in ("text", "a", "code_block", "md"):
                words.append(str(node.get("text", "")))
            elif tag == "at":
                words.append(str(node.get("user_id", "")))
        lines.append("".join(words))
    return "\n".join([body.get("title") or ""] + lines).strip()


@dataclass(frozen=True)
class Verdict:
    ok: bool
    status: int = 200
    reason: str = ""
    payload: dict = field(default_factory=dict)


class CallbackVerifier:
    """Checks an HTTP callback before the SDK sees it: the SDK checks the signature but not the
    timestamp (so a captured callback could be replayed forever), and answers every rejection
    with HTTP 500 and a logged traceback. Rejections here are a clean 4xx with one line logged."""

    def __init__(self, encrypt_key: str, verification_token: str, clock: Callable[[], float] = time.time):
        self.encrypt_key = encrypt_key
        self.token = verification_token
        self.clock = clock

    def check(self, body: bytes, headers: Mapping[str, str]) -> Verdict:
        try:
            outer = json.loads(body or b"")
        except ValueError:
            return Verdict(False, 400, "body is not JSON")
        if not isinstance(outer, dict):
            return Verdict(False, 400, "body is not a JSON object")
        if not isinstance(outer.get("encrypt"), str):
            return Verdict(False, 400, "body is not encrypted")
        try:
            payload = json.loads(AESCipher(self.encrypt_key).decrypt_str(outer["encrypt"]))
        except Exception:  # wrong key, bad padding, not base64, not JSON
            return Verdict(False, 400, "body cannot be decrypted")
        if not isinstance(payload, dict):
            return Verdict(False, 400, "payload is not a JSON object")
        if payload.get("type") == "url_verification":
            if not hmac.compare_digest(str(payload.get("token", "")).encode(), self.token.encode()):
                return Verdict(False, 401, "wrong verification token")
            return Verdict(True, payload=payload)
        timestamp, nonce, signature = (headers.get(h) for h in (TS_HEADER, NONCE_HEADER, SIG_HEADER))
        if not (timestamp and nonce and signature):
            return Verdict(False, 401, "unsigned callback")
        try:
            age = abs(self.clock() - int(timestamp))
        except ValueError:
            return Verdict(False, 401, "bad timestamp")
        if age > MAX_SKEW:
            return Verdict(False, 401, "stale timestamp")
        expected = hashlib.sha256((timestamp + nonce + self.encrypt_key).encode() + body).hexdigest()
        if not hmac.compare_digest(expected, signature):
            return Verdict(False, 401, "bad signature")
        header = payload.get("header") if isinstance(payload.get("header"), dict) else {}
        if not hmac.compare_digest(str(header.get("token", "")).encode(), self.token.encode()):
            return Verdict(False, 401, "wrong verification token")
        return Verdict(True, payload=payload)


class FeishuEvents:
    """Turns SDK events into conversation calls. The SDK calls these handlers synchronously
    (in the HTTP handler, or on the long connection's own thread): they only hand the work to
    the main loop and return, well within Feishu's 3 seconds."""

    def __init__(self, chat, platform: FeishuPlatform, loop: asyncio.AbstractEventLoop | None):
        self.chat = chat
        self.platform = platform
        self.loop = loop
        self.chat_types: OrderedDict[str, str] = OrderedDict()  # chat_id → p2p | group, as seen

    # --- SDK callbacks (sync) ---------------------------------------------------------------------------
    def on_message(self, data: P2ImMessageReceiveV1) -> None:
        try:
            msg = incoming_message(data)
        except Exception:  # a payload we cannot read must not become the SDK's 500
            log.exception("unreadable im.message.receive_v1 event")
            return
        if msg is not None:
            self.hand_off(self.handle_message(msg))

    def on_card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        try:
            return self._card_action(data)
        except Exception:
            log.exception("unreadable card.action.trigger callback")
            return P2CardActionTriggerResponse({})

    def hand_off(self, coro: Awaitable) -> None:
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
        await self.platform.ensure_identity()
        if msg.sender and msg.sender == self.platform.bot_open_id:
            return
        self._remember_chat(msg.chat_id, msg.chat_type)
        text, mentioned = message_text(msg, self.platform.bot_open_id)
        if text is None:
            return
        is_dm = msg.chat_type == "p2p"
        conv = Conversation(platform="feishu", channel=msg.chat_id, user=msg.sender, thread=msg.root_id,
                            is_dm=is_dm, extra={"message_id": msg.message_id, "chat_type": msg.chat_type})
        prefix = self.prefix
        if msg.root_id is None:
            if not (mentioned or is_dm):
                return  # group chatter not addressed to the bot
            if looks_like_command(text):
                return await self.chat.submit("command", conv, text=text, prefix=prefix)
        await self.chat.submit("message", conv, text=text, mentioned=mentioned, prefix=prefix)

    @property
    def prefix(self) -> str:
        return f"@{self.platform.bot_name}" if self.platform.bot_name else "@bot"

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
        lang = value.get("lang") if value.get("lang") in ("zh", "en") else self.platform.default_lang
        kind = value.get("action")
        context = event.context if event else None
        chat_id = getattr(context, "open_chat_id", None) or ""
        clicked = getattr(context, "open_message_id", None) or ""
        user = getattr(getattr(event, "operator", None), "open_id", None) or ""
        event_id = (data.header.event_id if data.header else "") or ""
        if not chat_id or kind not in ("ask", "ask_submit", "details", "choose"):
            return _toast("warning", R.ft(lang, "toast_unknown"))
        conv = Conversation(platform="feishu", channel=chat_id, user=user, thread=value.get("thread") or None,
                            is_dm=self.chat_types.get(chat_id) == "p2p", extra={"message_id": clicked})
        if kind == "ask":
            self.hand_off(self._once(event_id, self._ask_form(conv, value, clicked, lang)))
            return _toast("info", R.ft(lang, "toast_ask"))
        if kind == "ask_submit":
            question = str((action.form_value or {}).get("question") or "").strip()
            if not question:
                return _toast("warning", R.ft(lang, "toast_empty"))
            payload = {k: v for k, v in value.items() if k != "action"}
            self.hand_off(self._once(event_id, self._action(conv, "ask", payload, question)))
            return P2CardActionTriggerResponse({
                "toast": {"type": "success", "content": R.ft(lang, "toast_answer")},
                "card": {"type": "raw", "data": R.form_submitted_card(lang)}})
        self.hand_off(self._once(event_id, self._action(conv, kind, value)))
        return _toast("info", R.ft(lang, "toast_details" if kind == "details" else "toast_answer"))

    async def _once(self, event_id: str, coro: Awaitable) -> None:
        if await self.chat.first_time("feishu", event_id, EVENT_TTL):
            await coro
        else:
            coro.close()

    async def _ask_form(self, conv: Conversation, value: dict, clicked: str, lang: str) -> None:
        card = R.ask_form_card(value, lang)
        await self.platform.post_cards(conv.channel, [card], thread=conv.thread or clicked)

    async def _action(self, conv: Conversation, action: str, value: dict, question: str | None = None) -> None:
        root = value.get("thread") or conv.thread
        info = await self.chat.threads.get("feishu", conv.channel, root) if root else None
        if info is not None:  # the thread knows the repository as commands name it (a path, owner/name)
            value = {**value, "repo": info.repo}
        await self.chat.submit("action", conv, action=action, value=value, question=question)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
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


# --- the adapter -----------------------------------------------------------------------------------------

class FeishuAdapter:
    def __init__(self, settings, chat, *, receive: bool):
        self.settings = settings
        self.chat = chat
        self.receive = receive
        self.mode = settings.feishu_mode
        secret = settings.feishu_app_secret.get_secret_value()
        domain = settings.feishu_domain.rstrip("/")
        try:
            client = lark.Client.builder().app_id(settings.feishu_app_id).app_secret(secret) \
                .domain(domain).timeout(20).build()
        except ValueError:
            raise ConfigError("Configuration error: FEISHU_DOMAIN must be an https origin without a path "
                              "(http only for localhost).") from None
        self.executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix="feishu-api")
        self.api = FeishuApi(client, self.executor, Pacer())
        self.platform = FeishuPlatform(self.api, default_lang=settings.default_lang)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self.events = FeishuEvents(chat, self.platform, loop)
        self.verifier: CallbackVerifier | None = None
        if self.mode == "http" and receive:
            token, key = settings.feishu_verification_token, settings.feishu_encrypt_key
            if not (token and key and token.get_secret_value() and key.get_secret_value()):
                raise ConfigError("Configuration error: FEISHU_MODE=http needs FEISHU_VERIFICATION_TOKEN and "
                                  "FEISHU_ENCRYPT_KEY (callbacks must be encrypted and signed).")
            self.verifier = CallbackVerifier(key.get_secret_value(), token.get_secret_value())
            self.dispatcher = self._dispatcher(key.get_secret_value(), token.get_secret_value())
        else:
            self.dispatcher = self._dispatcher("", "")  # the long connection is authenticated already
        self._ws_thread: threading.Thread | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None

    def _dispatcher(self, encrypt_key: str, token: str) -> lark.EventDispatcherHandler:
        return lark.EventDispatcherHandler.builder(encrypt_key, token) \
            .register_p2_im_message_receive_v1(self.events.on_message) \
            .register_p2_card_action_trigger(self.events.on_card_action) \
            .build()

    # --- runner interface ---------------------------------------------------------------------------------
    def http_routes(self) -> list:
        if self.mode == "http" and self.receive:
            return [("POST", "/feishu/events", self.handle_http)]
        return []

    async def start(self) -> None:
        self.events.loop = asyncio.get_running_loop()
        await self.platform.ensure_identity()
        if self.mode == "ws" and self.receive and self._ws_thread is None:
            self._ws_loop = asyncio.new_event_loop()
            self._ws_thread = threading.Thread(target=self._run_ws, args=(self._ws_loop,), name="feishu-ws",
                                               daemon=True)
            self._ws_thread.start()

    async def close(self) -> None:
        loop = self._ws_loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(_cancel_all, loop)
            except RuntimeError:
                pass  # the loop closed meanwhile
        if self._ws_thread is not None:
            await asyncio.to_thread(self._ws_thread.join, 5.0)
        self.executor.shutdown(wait=False, cancel_futures=True)

    # --- long connection -------------------------------------------------------------------------------------
    def _run_ws(self, loop: asyncio.AbstractEventLoop) -> None:
        import lark_oapi.ws.client as ws_client

        asyncio.set_event_loop(loop)
        # lark-oapi 1.7.5 keeps its event loop in a module global bound when it was first imported
        # (typically the bot's running main loop, where `start()` fails): give it this thread's.
        ws_client.loop = loop
        client = lark.ws.Client(self.settings.feishu_app_id, self.settings.feishu_app_secret.get_secret_value(),
                                event_handler=self.dispatcher, domain=self.settings.feishu_domain.rstrip("/"),
                                log_level=lark.LogLevel.WARNING, auto_reconnect=True)
        try:
            client.start()  # runs until close() cancels its tasks
        except (asyncio.CancelledError, RuntimeError):
            pass
        except Exception as exc:  # e.g. wrong credentials: one line, never the secret
            log.error("The Feishu long connection stopped: %s", exc)
        finally:
            try:  # 1.7.5 has no public stop(): close the socket with the client's own coroutine
                loop.run_until_complete(asyncio.wait_for(client._disconnect(), 2))
            except BaseException:
                pass
            _cancel_all(loop)
            pending = asyncio.all_tasks(loop)
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    # --- HTTP callbacks ---------------------------------------------------------------------------------------
    async def handle_http(self, request: web.Request) -> web.Response:
        body = await request.read()
        assert self.verifier is not None
        verdict = self.verifier.check(body, request.headers)
        if not verdict.ok:
            log.warning("Feishu callback rejected: %s", verdict.reason)
            return web.json_response({"code": verdict.status, "msg": verdict.reason}, status=verdict.status)
        header = verdict.payload.get("header") or {}
        if verdict.payload.get("type") != "url_verification" and header.get("event_type") not in HANDLED_EVENTS:
            return web.json_response({"msg": "ignored"})  # acknowledged, so Feishu does not re-push it
        raw = lark.RawRequest()
        raw.uri = request.path
        raw.body = body
        # The SDK reads these from a plain dict, case-sensitively: pass them in its spelling.
        raw.headers = {name: request.headers[name] for name in (TS_HEADER, NONCE_HEADER, SIG_HEADER, "X-Request-Id")
                       if name in request.headers}
        self.events.loop = asyncio.get_running_loop()
        resp = self.dispatcher.do(raw)
        if resp.status_code != 200:
            log.warning("Feishu callback not handled by the SDK (HTTP %s)", resp.status_code)
            return web.json_response({"code": 400, "msg": "not handled"}, status=400)
        return web.Response(body=resp.content, status=200, content_type="application/json", charset="utf-8")


def build_feishu(settings, chat, *, receive: bool) -> FeishuAdapter:
    """The Feishu adapter: `.platform` (register with the chat service), `.http_routes()`,
    `await .start()`, `await .close()`."""
    return FeishuAdapter(settings, chat, receive=receive)


__all__ = ["build_feishu", "FeishuAdapter", "FeishuPlatform", "FeishuApi", "FeishuEvents", "CallbackVerifier",
           "FeishuError", "Pacer", "incoming_message", "message_text", "looks_like_command"]

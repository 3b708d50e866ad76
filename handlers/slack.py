"""Slack, as a thin adapter: Bolt payloads in → bot.chat calls; bot contents out → Web API calls.

The only module that imports slack_bolt / slack_sdk.

Receiving: Socket Mode when SLACK_APP_TOKEN is set, else HTTP at `POST /slack/events` (Bolt checks
the signature and a 5-minute timestamp window: anything else is a 401 and causes nothing). Every
listener acknowledges at once and hands the work to `chat.spawn`; events are deduplicated on
`event_id` and on (channel, ts), so Slack's retries and the app_mention + message pair that one
mention produces give one answer.

Sending (`SlackPlatform`): contents are rendered by bot/render/slack.py into payloads within
Block Kit's limits; posts are paced per channel (~1 message/second with a short burst) through a
FIFO lock, so order within a thread holds when several jobs post at once; the Web API client
retries 429s after Retry-After and transient server/connection errors. Answers stream with
Slack's chat streaming methods and fall back to a message edited at most about once a second.
Keyed sends (scheduled digests) are idempotent across crashes: a marker in Redis plus the key in
the message's metadata let a restarted process find what it already posted.

Tokens are never logged nor put in error messages.
"""
from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from aiohttp import ClientConnectionError, ServerDisconnectedError, web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.chat import say
from bot.models import BotError, UsageError
from bot.platform import Content, Conversation, MessageRef, Notice, chunk_text
from bot.render import slack as R

log = logging.getLogger(__name__)

DEDUPE_TTL = 3600
SOCKET_CONNECT_TIMEOUT = 60.0
SENT_TTL = 7 * 86400
METADATA_EVENT = "digest_bot_message"
STREAM_MESSAGE_CHARS = 10000  # one streamed message; markdown_text allows 12,000 per call
EDIT_MESSAGE_CHARS = 3500  # one edited fallback message (plain `text`, ≤4,000 recommended)
# Slack's answers meaning "no streaming methods for this app": fall back to edits for good.
STREAMING_UNAVAILABLE = {"method_not_found", "unknown_method", "not_allowed", "not_allowed_token_type",
                         "feature_not_enabled", "missing_scope"}
# …and meaning "not for this answer": fall back to edits for this one.
STREAMING_REFUSED = {"invalid_arguments", "message_not_in_streaming_state", "not_in_streaming_state"}
DROPPED_SUBTYPES = {"message_changed", "message_deleted", "bot_message", "channel_join", "channel_leave",
                    "channel_topic", "channel_purpose", "channel_name", "pinned_item", "unpinned_item",
                    "ekm_access_denied", "me_message", "message_replied", "thread_broadcast_deleted",
                    "assistant_app_thread", "group_join", "group_leave", "tombstone"}


class SlackError(BotError):
    """A Slack Web API call failed for good (after retries); names the method and Slack's error
    code, never the token."""


# --- retries -------------------------------------------------------------------------------------------

class RetryAfterHandler(AsyncRetryHandler):
    """429 → wait Retry-After (seconds, fractions allowed) plus a little jitter, then retry."""

    def __init__(self, max_retry_count: int = 12):
        super().__init__(max_retry_count=max_retry_count)

    async def _can_retry_async(self, *, state, request, response=None, error=None) -> bool:
        return response is not None and response.status_code == 429

    async def prepare_for_next_attempt_async(self, *, state, request, response=None, error=None) -> None:
        state.next_attempt_requested = True
        wait = 1.0
        for name, values in (response.headers or {}).items() if response is not None else ():
            if name.lower() == "retry-after":
                raw = values[0] if isinstance(values, (list, tuple)) else values
                try:
                    wait = max(0.0, float(raw))
                except (TypeError, ValueError):
                    pass
        await asyncio.sleep(wait + random.uniform(0, min(0.5, 0.1 + wait * 0.1)))
        state.increment_current_attempt()


class TransientErrorHandler(AsyncRetryHandler):
    """5xx answers, dropped connections and timeouts → back off (0.2 s, 0.4 s, 0.8 s…) and retry."""

    def __init__(self, max_retry_count: int = 4, base: float = 0.2):
        super().__init__(max_retry_count=max_retry_count)
        self.base = base

    async def _can_retry_async(self, *, state, request, response=None, error=None) -> bool:
        if error is not None:
            return isinstance(error, (ClientConnectionError, ServerDisconnectedError, asyncio.TimeoutError))
        return response is not None and response.status_code in (500, 502, 503, 504)

    async def prepare_for_next_attempt_async(self, *, state, request, response=None, error=None) -> None:
        state.next_attempt_requested = True
        await asyncio.sleep(self.base * (2 ** state.current_attempt) * random.uniform(0.8, 1.2))
        state.increment_current_attempt()


def make_client(token: str, base_url: str) -> AsyncWebClient:
    base = base_url if base_url.endswith("/") else base_url + "/"
    return AsyncWebClient(token=token, base_url=base, timeout=30,
                          retry_handlers=[RetryAfterHandler(), TransientErrorHandler()])


# --- pacing ----------------------------------------------------------------------------------------

@dataclass
class Pacing:
    """Posting pace per channel (Slack: ~1 message/second/channel, short bursts allowed) and how
    often a streamed answer is pushed (native appends / fallback edits)."""
    per_second: float = 1.0
    burst: int = 3
    edit_interval: float = 1.0
    stream_interval: float = 0.3


@dataclass
class _Bucket:
    tokens: float
    stamp: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class ChannelPacer:
    """A FIFO lock and a token bucket per channel: posts go out in the order they were asked for,
    no faster than the channel allows."""

    def __init__(self, pacing: Pacing):
        self.pacing = pacing
        self._buckets: dict[str, _Bucket] = {}

    def lock(self, channel: str) -> asyncio.Lock:
        return self._bucket(channel).lock

    def _bucket(self, channel: str) -> _Bucket:
        if channel not in self._buckets:
            self._buckets[channel] = _Bucket(float(self.pacing.burst), time.monotonic())
        return self._buckets[channel]

    async def wait_turn(self, channel: str) -> None:
        """Call with the channel's lock held: spend one token, sleeping until there is one."""
        b = self._bucket(channel)
        rate = max(self.pacing.per_second, 1e-6)
        now = time.monotonic()
        b.tokens = min(float(self.pacing.burst), b.tokens + (now - b.stamp) * rate)
        b.stamp = now
        if b.tokens < 1.0:
            await asyncio.sleep((1.0 - b.tokens) / rate)
            b.tokens, b.stamp = 1.0, time.monotonic()
        b.tokens -= 1.0


# --- the platform ----------------------------------------------------------------------------------

class SlackPlatform:
    name = "slack"
    supports_streaming = True
    supports_buttons = True
    supports_files = True

    def __init__(self, client: AsyncWebClient, store=None, pacing: Pacing | None = None):
        self.client = client
        self.store = store
        self.pacing = pacing or Pacing()
        self.pacer = ChannelPacer(self.pacing)
        self.native_streaming = True  # switched off for good once Slack says the methods are unavailable

    # --- Web API calls --------------------------------------------------------------------------
    async def call(self, method: str, **kwargs) -> dict:
        """One Web API call; failures become a SlackError naming the method and Slack's error."""
        fn = getattr(self.client, method.replace(".", "_"))
        try:
            response = await fn(**kwargs)
        except SlackApiError as exc:
            code = (exc.response.get("error") if exc.response is not None else None) or "error"
            raise SlackError(f"Slack {method} failed: {code}.") from None
        except (SlackClientError, ClientConnectionError, asyncio.TimeoutError) as exc:
            raise SlackError(f"Slack {method} failed: {type(exc).__name__}.") from None
        return response.data if hasattr(response, "data") else dict(response)

    async def _post(self, channel: str, payload: dict, thread: str | None, metadata: dict | None = None) -> str:
        """chat.postMessage, paced, in this channel's order; returns the ts."""
        async with self.pacer.lock(channel):
            return await self._post_locked(channel, payload, thread, metadata)

    async def _post_locked(self, channel: str, payload: dict, thread: str | None,
                           metadata: dict | None = None) -> str:
        """chat.postMessage with the channel's lock already held."""
        args: dict[str, Any] = dict(channel=channel, text=payload["text"], unfurl_links=False, unfurl_media=False)
        if payload.get("blocks"):
            args["blocks"] = payload["blocks"]
        if thread:
            args["thread_ts"] = thread
        if metadata:
            args["metadata"] = metadata
        await self.pacer.wait_turn(channel)
        data = await self.call("chat.postMessage", **args)
        return str(data["ts"])

    # --- ChatPlatform ---------------------------------------------------------------------------
    async def send(self, channel: str, content: Content, *, thread: str | None = None,
                   key: str | None = None) -> MessageRef:
        """All payloads of one content go out together (the channel's lock is held throughout),
        continuations in the thread — of the first message when it is top level."""
        payloads = R.render(content, thread=thread)
        async with self.pacer.lock(channel):
            if key and self.store is not None:
                first = await self._send_once(channel, payloads, thread, key)
            else:
                first = await self._post_locked(channel, payloads[0], thread)
                for payload in payloads[1:]:
                    await self._post_locked(channel, payload, thread or first)
        return MessageRef(channel, first, thread)

    async def _send_once(self, channel: str, payloads: list[dict], thread: str | None, key: str) -> str:
        """Post a keyed content at most once, even across a crash between a post and its
        bookkeeping: a Redis marker says a post may have happened, and the key in each message's
        metadata finds what made it. Called with the channel's lock held."""
        mark = self.store.k("slack", "sent", key)
        state = await self.store.get_json(mark) or {}
        if state.get("done") and state.get("ts"):
            return state["ts"]
        found = await self._find_posted(channel, thread, key, state.get("ts")) if state else {}
        first = found.get(0)
        if first is None:
            await self.store.set_json(mark, {"pending": True}, ttl=SENT_TTL)
            first = await self._post_locked(channel, payloads[0], thread, _metadata(key, 0))
            await self.store.set_json(mark, {"pending": True, "ts": first}, ttl=SENT_TTL)
        for part, payload in enumerate(payloads[1:], 1):
            if part not in found:
                await self._post_locked(channel, payload, thread or first, _metadata(key, part))
        await self.store.set_json(mark, {"ts": first, "done": True}, ttl=SENT_TTL)
        return first

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
        data = await self.call(method, include_all_metadata=True, limit=200, **kwargs)
        found: dict[int, str] = {}
        for m in data.get("messages") or []:
            meta = m.get("metadata") or {}
            payload = meta.get("event_payload") or {}
            if meta.get("event_type") == METADATA_EVENT and payload.get("key") == key:
                found.setdefault(int(payload.get("part", 0)), str(m["ts"]))
        return found

    async def update(self, ref: MessageRef, content: Content) -> MessageRef:
        payloads = R.render(content, thread=ref.thread)
        first = payloads[0]
        await self.call("chat.update", channel=ref.channel, ts=ref.id, text=first["text"], blocks=first["blocks"])
        if len(payloads) > 1:
            async with self.pacer.lock(ref.channel):
                for payload in payloads[1:]:
                    await self._post_locked(ref.channel, payload, ref.thread_root)
        return ref

    async def reply_private(self, conv: Conversation, content: Content) -> None:
        """Ephemeral to the asking user (in their thread); a DM is private already. If Slack
        refuses (the bot is not in the channel), the slash command's response_url still works."""
        if conv.is_dm:
            await self.send(conv.channel, content, thread=conv.thread)
            return
        payloads = R.render(content, thread=conv.thread)
        for i, payload in enumerate(payloads):
            args: dict[str, Any] = dict(channel=conv.channel, user=conv.user, text=payload["text"],
                                        blocks=payload["blocks"])
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

    async def _respond(self, url: str, payload: dict) -> None:
        hook = AsyncWebhookClient(url, timeout=15, retry_handlers=[RetryAfterHandler(4), TransientErrorHandler()])
        try:
            resp = await hook.send(text=payload["text"], blocks=payload["blocks"], response_type="ephemeral",
                                   replace_original=False)
        except (SlackClientError, ClientConnectionError, asyncio.TimeoutError) as exc:
            raise SlackError(f"Slack response_url failed: {type(exc).__name__}.") from None
        if resp.status_code != 200:
            raise SlackError(f"Slack response_url failed: HTTP {resp.status_code}.")

    async def stream(self, channel: str, thread: str, pieces: AsyncIterator[str], *,
                     conv: Conversation | None = None, lang: str = "") -> MessageRef:
        writer = _AnswerStream(self, channel, thread, conv)
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

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        args: dict[str, Any] = dict(channel=channel, content=text, filename=filename, title=title)
        if thread:
            args["thread_ts"] = thread
        async with self.pacer.lock(channel):
            await self.pacer.wait_turn(channel)
            try:
                await self.client.files_upload_v2(**args)
            except SlackApiError as exc:
                code = (exc.response.get("error") if exc.response is not None else None) or "error"
                raise SlackError(f"Slack file upload failed: {code}.") from None
            except (SlackClientError, ClientConnectionError, asyncio.TimeoutError) as exc:
                raise SlackError(f"Slack file upload failed: {type(exc).__name__}.") from None


def _metadata(key: str, part: int) -> dict:
    return {"event_type": METADATA_EVENT, "event_payload": {"key": key, "part": part}}


# --- streaming -------------------------------------------------------------------------------------

class StreamEscaper:
    """Escapes a text arriving in pieces exactly as `esc` would escape it whole. Escaping is
    local and no pattern spans whitespace, so text is released up to its last whitespace (or,
    for a very long word, up to a point no pattern can straddle)."""

    HOLD = 16

    def __init__(self) -> None:
        self.buffer = ""

    def feed(self, piece: str) -> str:
        self.buffer += piece or ""
        cut = max(self.buffer.rfind(" "), self.buffer.rfind("\n"), self.buffer.rfind("\t")) + 1
        if cut <= 0 and len(self.buffer) > 256:
            cut = len(self.buffer) - self.HOLD
            while cut > 0 and ("@" in self.buffer[max(0, cut - 10):cut] or self.buffer[cut - 1] == "]"):
                cut -= 1
        if cut <= 0:
            return ""
        out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return R.esc(out)

    def flush(self) -> str:
        out, self.buffer = self.buffer, ""
        return R.esc(out)


class _AnswerStream:
    """One answer going into a thread: Slack's native stream when available (recipient known),
    else a posted message edited at most about once a second. Text is pushed on the first write
    and then at a steady interval; past the per-message limit it continues in a new message, with
    an open code fence closed and reopened across the cut."""

    def __init__(self, platform: SlackPlatform, channel: str, thread: str, conv: Conversation | None):
        self.p = platform
        self.channel = channel
        self.thread = thread
        extra = (conv.extra if conv else None) or {}
        self.team = extra.get("team_id")
        self.user = conv.user if conv else None
        self.native = platform.native_streaming and bool((self.team and self.user) or (conv and conv.is_dm))
        self.pending = ""
        self.lock = asyncio.Lock()
        self.timer: asyncio.Task | None = None
        self.timer_sleeping = False
        self.first_ts: str | None = None
        self.ts: str | None = None  # the message being written
        self.text = ""  # what the current message holds (escaped)
        self.reopen_fence = False
        self.helper = None  # slack_sdk AsyncChatStream

    @property
    def interval(self) -> float:
        return self.p.pacing.stream_interval if self.native else self.p.pacing.edit_interval

    @property
    def limit(self) -> int:
        return STREAM_MESSAGE_CHARS if self.native else EDIT_MESSAGE_CHARS

    async def write(self, text: str) -> None:
        if not text:
            return
        self.pending += text
        if self.first_ts is None:
            await self.flush()
        elif self.timer is None:
            self.timer_sleeping = True  # until its sleep is over, closing may simply cancel it
            self.timer = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.interval)
        self.timer_sleeping = False
        try:
            await self.flush()
        except Exception as exc:  # noqa: BLE001 — the text is kept; close() tries again and reports
            log.debug("a streamed update failed: %s", exc)
        finally:
            self.timer = None

    async def flush(self) -> None:
        """Send what is pending; on failure it stays pending (nothing is lost) and the error rises."""
        async with self.lock:
            text, self.pending = self.pending, ""
            try:
                while text:
                    room = self.limit - len(self.text) - 8  # 8: room to close a code fence
                    if room < 200 and self.text:
                        await self._next_message()
                        continue
                    part, rest = _take(text, room)
                    await self._emit("```\n" + part if self.reopen_fence else part)
                    self.reopen_fence = False
                    text = rest
            except BaseException:
                self.pending = text + self.pending
                raise

    async def close(self) -> MessageRef:
        if self.timer is not None:
            if self.timer_sleeping:
                self.timer.cancel()
                self.timer = None
            else:
                await asyncio.gather(self.timer, return_exceptions=True)
        await self.flush()
        if self.first_ts is None:
            self.pending = R.esc(R.s("en", "empty_answer"))
            await self.flush()
        await self._finish_message()
        return MessageRef(self.channel, self.first_ts or "", self.thread)

    async def _next_message(self) -> None:
        if self.text.count("```") % 2 == 1:
            await self._emit("\n```")
            self.reopen_fence = True
        await self._finish_message()
        self.ts, self.text, self.helper = None, "", None

    async def _emit(self, part: str) -> None:
        if self.native:
            try:
                return await self._emit_native(part)
            except SlackError as exc:
                code = _error_code(exc)
                if self.ts is None and code not in STREAMING_UNAVAILABLE | STREAMING_REFUSED:
                    raise
                log.info("Slack streaming not usable (%s); editing a message instead", code)
                if code in STREAMING_UNAVAILABLE:
                    self.p.native_streaming = False
                self.native = False
        await self._emit_edit(part)

    async def _emit_native(self, part: str) -> None:
        if self.helper is None:
            kwargs: dict[str, Any] = dict(buffer_size=1, channel=self.channel, thread_ts=self.thread)
            if self.team and self.user:
                kwargs.update(recipient_team_id=self.team, recipient_user_id=self.user)
            self.helper = await self.p.client.chat_stream(**kwargs)
        starting = self.helper.ts is None
        try:
            if starting:  # a new message in the thread: take its turn in the channel
                async with self.p.pacer.lock(self.channel):
                    await self.p.pacer.wait_turn(self.channel)
                    await self.helper.append(markdown_text=part)
            else:
                await self.helper.append(markdown_text=part)
        except SlackApiError as exc:
            code = (exc.response.get("error") if exc.response is not None else None) or "error"
            raise SlackError(f"Slack chat.{'startStream' if starting else 'appendStream'} failed: {code}.") from None
        except (SlackClientError, ClientConnectionError, asyncio.TimeoutError) as exc:
            raise SlackError(f"Slack streaming failed: {type(exc).__name__}.") from None
        if starting:
            self.ts = str(self.helper.ts)
            self.first_ts = self.first_ts or self.ts
        self.text += part

    async def _emit_edit(self, part: str) -> None:
        self.text += part
        shown = R.md_to_mrkdwn(self.text)
        if self.ts is None:
            ts = await self.p._post(self.channel, {"text": shown, "blocks": []}, self.thread)
            self.ts = ts
            self.first_ts = self.first_ts or ts
        else:
            await self.p.call("chat.update", channel=self.channel, ts=self.ts, text=shown)

    async def _finish_message(self) -> None:
        if self.native and self.helper is not None and self.helper.ts is not None:
            try:
                await self.helper.stop()
            except (SlackApiError, SlackClientError, ClientConnectionError, asyncio.TimeoutError) as exc:
                log.warning("could not close a Slack stream: %s", type(exc).__name__)


def _error_code(exc: SlackError) -> str:
    """Slack's error code, the last word of a SlackError's sentence."""
    return str(exc).rsplit(":", 1)[-1].strip(" .")


_ENTITY_TAIL = re.compile(r"&[a-z]{0,3}$")


def _take(text: str, room: int) -> tuple[str, str]:
    """The first ≤room characters of text (cut at a line or word when possible, never inside an
    entity), and the rest."""
    if len(text) <= room:
        return text, ""
    head = chunk_text(text, max(1, room))[0]
    m = _ENTITY_TAIL.search(head)
    if m and m.start() > 0:
        head = head[:m.start()]
    return head, text[len(head):]


# --- receiving -------------------------------------------------------------------------------------

_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


class SlackAdapter:
    def __init__(self, settings, chat, *, receive: bool, pacing: Pacing | None = None):
        self.settings = settings
        self.chat = chat
        self.receive = receive
        self.socket_mode = settings.slack_app_token is not None
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        if receive and not self.socket_mode and not secret:
            raise UsageError("Slack HTTP mode needs SLACK_SIGNING_SECRET (or set SLACK_APP_TOKEN for Socket Mode).")
        token = settings.slack_bot_token.get_secret_value()
        self.client = make_client(token, settings.slack_api_url)
        self.platform = SlackPlatform(self.client, chat.store, pacing)
        self._socket = None
        self.app: AsyncApp | None = None
        if receive:  # the clock only posts: no Bolt app, no listeners
            # No I/O here: Bolt calls auth.test on the first request and keeps the answer.
            self.app = AsyncApp(client=self.client, signing_secret=secret or "unused-in-socket-mode",
                                request_verification_enabled=not self.socket_mode,
                                process_before_response=True,  # listeners only ack + hand off: fast
                                logger=_bolt_logger())
            self._register()

    # --- lifecycle ----------------------------------------------------------------------------------
    def http_routes(self) -> list:
        if not self.receive or self.socket_mode:
            return []
        return [("POST", "/slack/events", self._http)]

    async def start(self) -> None:
        if not (self.receive and self.socket_mode):
            return
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        self._socket = AsyncSocketModeHandler(self.app, self.settings.slack_app_token.get_secret_value())
        try:
            # Ask for the WebSocket URL ourselves first: the SDK's connect() retries a refused
            # app token forever; we want one clear sentence at start-up instead.
            self._socket.client.wss_uri = await self._socket.client.issue_new_wss_url()
            await asyncio.wait_for(self._socket.connect_async(), timeout=SOCKET_CONNECT_TIMEOUT)
        except SlackApiError as exc:
            code = (exc.response.get("error") if exc.response is not None else None) or "error"
            await self.close()
            raise SlackError(f"Slack Socket Mode could not connect: {code} (check SLACK_APP_TOKEN).") from None
        except (SlackClientError, ClientConnectionError, asyncio.TimeoutError, OSError) as exc:
            await self.close()
            raise SlackError(f"Slack Socket Mode could not connect: {type(exc).__name__}.") from None
        log.info("Slack Socket Mode connected")

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None

    async def _http(self, request: web.Request) -> web.Response:
        bolt_request = await to_bolt_request(request)
        return await to_aiohttp_response(await self.app.async_dispatch(bolt_request))

    # --- listeners ------------------------------------------------------------------------------------
    def _register(self) -> None:
        app = self.app
        app.command(re.compile(r"^/"))(self._on_command)
        app.event("app_mention")(self._on_mention)
        app.event("message")(self._on_message)
        app.action(R.ACTION_ASK)(self._on_ask_button)
        app.action(R.ACTION_DETAILS)(self._on_details_button)
        app.action(R.ACTION_CHOOSE)(self._on_choose_button)
        app.action(R.ACTION_LOW)(self._on_low_menu)
        app.view(R.MODAL_CALLBACK)(self._on_question_form)

    async def _on_command(self, ack, command: dict) -> None:
        await ack()
        conv = Conversation("slack", command.get("channel_id", ""), command.get("user_id", ""),
                            is_dm=str(command.get("channel_id", "")).startswith("D"),
                            extra={"response_url": command.get("response_url"), "team_id": command.get("team_id")})
        await self.chat.submit("command", conv, text=command.get("text") or "", prefix=command.get("command") or "/digest")

    async def _on_mention(self, body: dict, event: dict, context) -> None:
        await self._on_user_message(body, event, context, mention_event=True)

    async def _on_message(self, body: dict, event: dict, context) -> None:
        await self._on_user_message(body, event, context, mention_event=False)

    async def _on_user_message(self, body: dict, event: dict, context, *, mention_event: bool) -> None:
        if event.get("subtype") in DROPPED_SUBTYPES or event.get("bot_id") or event.get("bot_profile"):
            return
        bot_user = context.get("bot_user_id") or ""
        user, channel, ts = event.get("user") or "", event.get("channel") or "", event.get("ts") or ""
        if not user or not channel or (bot_user and user == bot_user):
            return
        text = event.get("text") or ""
        mentioned = mention_event or (bool(bot_user) and f"<@{bot_user}" in text)
        is_dm = event.get("channel_type") == "im" or channel.startswith("D")
        thread = event.get("thread_ts") if event.get("thread_ts") not in (None, "", ts) else None
        # A top-level channel message that does not mention the bot is not addressed to it.
        if not (mentioned or is_dm or thread):
            return
        if not await self._first(body.get("event_id")) or not await self._first(f"msg:{channel}:{ts}"):
            return
        question = _strip_mention(text, bot_user)
        conv = Conversation("slack", channel, user, thread=thread, is_dm=is_dm,
                            extra={"team_id": body.get("team_id") or event.get("team"), "ts": ts})
        await self.chat.submit("message", conv, text=question, mentioned=mentioned)

    async def _first(self, key: str | None) -> bool:
        """Event dedupe (Slack re-sends events it thinks we missed)."""
        return await self.chat.first_time("slack", key or "", ttl=DEDUPE_TTL)

    # --- interactivity ---------------------------------------------------------------------------------
    def _action_conv(self, body: dict, value: dict | None = None) -> Conversation:
        container = body.get("container") or {}
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        thread = ((value or {}).get("thread") or container.get("thread_ts") or message.get("thread_ts")
                  or container.get("message_ts") or message.get("ts"))
        user = body.get("user") or {}
        return Conversation("slack", channel, user.get("id", ""), thread=thread, is_dm=channel.startswith("D"),
                            extra={"response_url": body.get("response_url"),
                                   "team_id": (body.get("team") or {}).get("id") or user.get("team_id")})

    def _value_for(self, value: dict) -> dict:
        """Button values name the repository as the digest showed it; the core prefers the one
        its thread remembers. With neither (an old thread, a value that had to drop the name),
        the default repository is the only one a chat user can reach without naming it."""
        return value if value.get("repo") else {**value, "repo": self.settings.default_repo}

    async def _on_ask_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        value = R.parse_value(action.get("value"))
        self.chat.spawn(self._open_question_form(body, value))

    async def _on_details_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        value = R.parse_value(action.get("value"))
        conv = self._action_conv(body, value)
        await self._details(conv, value)

    async def _details(self, conv: Conversation, value: dict) -> None:
        await self.chat.submit("action", conv, action="details", value=self._value_for(value))

    async def _on_choose_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        value = R.parse_value(action.get("value"))
        conv = self._action_conv(body, value)
        await self.chat.submit("action", conv, action="choose", value=value)

    async def _on_low_menu(self, ack, body: dict, action: dict) -> None:
        await ack()
        choice = ((action.get("selected_option") or {}).get("value") or "")
        verb, _, sha = choice.partition(":")
        value = {**R.parse_value(action.get("block_id")), "sha": sha}
        if verb == "ask":
            self.chat.spawn(self._open_question_form(body, value))
        elif verb == "details":
            await self._details(self._action_conv(body, value), value)

    async def _open_question_form(self, body: dict, value: dict) -> None:
        conv = self._action_conv(body, value)
        value = {**value, "thread": value.get("thread") or conv.thread}
        metadata = R.compact_json({"v": value, "c": conv.channel}, 3000)
        try:
            await self.platform.call("views.open", trigger_id=body.get("trigger_id"),
                                     view=R.ask_modal(value, metadata))
        except SlackError as exc:  # the trigger expired (3 s): say how to ask instead
            log.warning("could not open the question form: %s", exc)
            lang = value.get("lang") or self.settings.default_lang
            await self.platform.reply_private(conv, Notice(say(lang, "ask_hint", sha=str(value.get("sha", ""))[:7])))

    async def _on_question_form(self, ack, body: dict, view: dict) -> None:
        await ack()
        meta = R.parse_value(view.get("private_metadata"))
        value = meta.get("v") or {}
        state = ((view.get("state") or {}).get("values") or {}).get(R.MODAL_BLOCK) or {}
        question = ((state.get(R.MODAL_INPUT) or {}).get("value") or "").strip()
        user = body.get("user") or {}
        conv = Conversation("slack", meta.get("c") or "", user.get("id", ""), thread=value.get("thread"),
                            is_dm=str(meta.get("c") or "").startswith("D"),
                            extra={"team_id": (body.get("team") or {}).get("id") or user.get("team_id")})
        await self.chat.submit("action", conv, action="ask", value=self._value_for(value), question=question or None)


class _DropClientNotice(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN from the environment by itself and then warns that the client we
    pass wins; that is intended (settings.py is our only reader of the environment)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("As you gave `client` as well")


def _bolt_logger() -> logging.Logger:
    logger = logging.getLogger("handlers.slack.bolt")
    if not any(isinstance(f, _DropClientNotice) for f in logger.filters):
        logger.addFilter(_DropClientNotice())
    return logger


def _strip_mention(text: str, bot_user: str) -> str:
    if bot_user:
        text = re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>", " ", text)
    return " ".join(text.split())


def build_slack(settings, chat, *, receive: bool, pacing: Pacing | None = None) -> SlackAdapter:
    """The Slack adapter for these settings. `receive`: also take requests from Slack (Socket Mode
    or HTTP); the clock only posts."""
    return SlackAdapter(settings, chat, receive=receive, pacing=pacing)

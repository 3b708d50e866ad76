"""Streaming an answer into a Slack thread: Slack's chat streaming methods when available (the
recipient is known), else a posted message edited at most about once a second; text is escaped
as it arrives (`StreamEscaper`) and continues in a new message past the per-message limit.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

from bot.core import tenants
from bot.core.chat_platform import Conversation, MessageRef, chunk_text
from bot.render import slack as R
from handlers.slack import api
from handlers.slack.api import SlackError
from handlers.slack.poster import SlackPoster

if TYPE_CHECKING:
    from handlers.slack.api import AsyncChatStream

log = logging.getLogger(__name__)

# Message sizes are counted in UTF-8 bytes: Slack does not say whether its limits count characters
# or bytes, and a Chinese answer is three bytes a character.
STREAM_MESSAGE_BYTES = 10000  # one streamed message; markdown_text allows 12,000 per call
EDIT_MESSAGE_BYTES = 3500  # one edited fallback message (plain `text`, ≤4,000 recommended)
# Slack's answers meaning "no streaming methods for this app": fall back to edits for good. Any
# other failure falls back to edits for this answer only.
STREAMING_UNAVAILABLE = {
    "method_not_found",
    "unknown_method",
    "not_allowed",
    "not_allowed_token_type",
    "feature_not_enabled",
    "missing_scope",
}


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
            while cut > 0 and ("@" in self.buffer[max(0, cut - 10) : cut] or self.buffer[cut - 1] == "]"):
                cut -= 1
        if cut <= 0:
            return ""
        out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return R.esc(out)

    def flush(self) -> str:
        out, self.buffer = self.buffer, ""
        return R.esc(out)


class AnswerStream:
    """One answer going into a thread: Slack's native stream when available (recipient known),
    else a posted message edited at most about once a second. Text is pushed on the first write
    and then at a steady interval; past the per-message limit it continues in a new message, with
    an open code fence closed and reopened across the cut."""

    def __init__(self, platform: SlackPoster, channel: str, thread: str, conv: Conversation | None):
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
        self.timer_sleeping = False  # read only while a timer exists
        self.first_ts: str | None = None
        self.ts: str | None = None  # the message being written
        self.text = ""  # what the current message holds (escaped)
        self.reopen_fence = False
        self.helper: AsyncChatStream | None = None

    @property
    def interval(self) -> float:
        return self.p.pacing.stream_interval if self.native else self.p.pacing.edit_interval

    @property
    def limit(self) -> int:
        return STREAM_MESSAGE_BYTES if self.native else EDIT_MESSAGE_BYTES

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
                    room = self.limit - _size(self.text) - 8  # 8: room to close a code fence
                    if room < 200 and self.text:
                        await self._next_message()
                        continue
                    part, rest = _take(text, _chars_within(text, room))
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
            except Exception as exc:  # whatever failed, the answer is still delivered
                if self.ts is None and not isinstance(exc, SlackError):
                    # before any streamed message exists nothing is lost by editing instead
                    # (an old slack_sdk, an unexpected answer…); once one exists, only Slack's
                    # refusals are handled here
                    log.warning("Slack streaming failed (%s); editing a message instead", type(exc).__name__)
                    # an SDK without the streaming helper we use stays without it: stop trying
                    code = "method_not_found" if isinstance(exc, (AttributeError, TypeError)) else "error"
                elif isinstance(exc, SlackError):
                    code = _error_code(exc)
                    log.info("Slack streaming not usable (%s); editing a message instead", code)
                else:
                    raise
                if code in STREAMING_UNAVAILABLE:
                    self.p.native_streaming = False
                self.native = False  # for the rest of this answer (the helper is never used again)
        await self._emit_edit(part)

    async def _emit_native(self, part: str) -> None:
        if self.helper is None:
            client, local = await self.p.client_for(self.channel)  # the channel's workspace's token
            kwargs: dict[str, Any] = dict(buffer_size=1, channel=local, thread_ts=self.thread)
            if self.team and self.user:
                kwargs.update(recipient_team_id=self.team, recipient_user_id=tenants.local_id(self.user))
            self.helper = await api.open_chat_stream(client, **kwargs)
        starting = self.helper.ts is None
        if starting:  # a new message in the thread: take its turn in the channel
            async with self.p.pacer.lock(self.channel):
                await self.p.pacer.wait_turn(self.channel)
                await api.stream_append(self.helper, part)
        else:
            await api.stream_append(self.helper, part)
        if starting:
            self.ts = str(self.helper.ts)
            self.first_ts = self.first_ts or self.ts
        self.text += part

    async def _emit_edit(self, part: str) -> None:
        # the message holds `part` only once Slack took it: a refused edit leaves it pending (flush)
        text = self.text + part
        shown = R.md_to_mrkdwn(text)
        if self.ts is None:
            ts = await self.p.post(self.channel, {"text": shown, "blocks": []}, self.thread)
            self.ts = ts
            self.first_ts = self.first_ts or ts
        else:
            await self.p.call("chat.update", channel=self.channel, ts=self.ts, text=shown)
        self.text = text

    async def _finish_message(self) -> None:
        if self.native and self.helper is not None and self.helper.ts is not None:
            await api.stream_stop(self.helper)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _chars_within(text: str, room: int) -> int:
    """How many leading characters of `text` fit in `room` UTF-8 bytes."""
    used = 0
    for i, ch in enumerate(text):
        used += len(ch.encode("utf-8"))
        if used > room:
            return i
    return len(text)


def _error_code(exc: SlackError) -> str:
    return getattr(exc, "code", "error")


_ENTITY_TAIL = re.compile(r"&[a-z]{0,3}$")


def _take(text: str, room: int) -> tuple[str, str]:
    """The first ≤room characters of text (cut at a line or word when possible, never inside an
    entity), and the rest."""
    if len(text) <= room:
        return text, ""
    head = chunk_text(text, max(1, room))[0]
    m = _ENTITY_TAIL.search(head)
    if m and m.start() > 0:
        head = head[: m.start()]
    return head, text[len(head) :]

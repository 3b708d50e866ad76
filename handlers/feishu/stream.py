"""An answer streamed into a Feishu thread: a CardKit card in streaming mode, or a card edited
with `message.patch` when CardKit is unavailable; a long answer continues on further cards.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from bot.core import tenants
from bot.core.chat_platform import MessageRef
from bot.render import feishu as R
from handlers.feishu.api import RATE_CODES, FeishuError
from handlers.feishu.cards import FeishuCards, send_uuid

log = logging.getLogger(__name__)

STREAM_INTERVAL = 0.1  # CardKit: ≤ 10 operations per second per card
PATCH_INTERVAL = 0.25  # message.patch: ≤ 5 edits per second per message


@dataclass
class Segment:
    """One card of a streamed answer: a CardKit card (`card_id`) or a patched message."""

    ref: MessageRef
    start: int  # where in the whole answer this card's text begins
    opener: str = ""  # a code fence reopened at the top of this card
    card_id: str | None = None
    sequence: int = 0
    shown: str = ""


@dataclass
class _Received:
    """What the answer's producer has handed over so far."""

    text: str = ""
    done: bool = False


class AnswerStream:
    """An answer streamed into the thread: a CardKit card in streaming mode whose text element is
    replaced with the whole text so far (at most every 0.1 s; pieces arriving in between are
    coalesced), closed at the end. Without CardKit: a normal card edited at most every 0.25 s.
    A long answer continues on further cards (each ≤ 30 KB); nothing is cut."""

    def __init__(self, platform: FeishuCards, channel: str, thread: str, lang: str = ""):
        self.p = platform
        self.channel = channel
        self.thread = thread
        self.lang = lang or platform.default_lang
        self.tenant = tenants.tenant_of(channel)  # a store app's tenant (its token), None when self-built

    async def run(self, pieces: AsyncIterator[str]) -> MessageRef:
        state = _Received()
        changed = asyncio.Event()

        async def read() -> None:
            try:
                async for piece in pieces:
                    state.text += piece
                    changed.set()
            finally:
                state.done = True
                changed.set()

        reader = asyncio.create_task(read())
        try:
            try:  # the core usually has the first piece already: start the card with it
                await asyncio.wait_for(changed.wait(), timeout=0.5)
            except TimeoutError:
                pass
            segment = await self._open(0, "", state.text)
            first = segment.ref
            last = time.monotonic()
            while True:
                if segment.shown == segment.opener + state.text[segment.start :]:
                    if state.done:
                        break
                    changed.clear()  # nothing new to show: wait for the next piece
                    await changed.wait()
                    continue
                pause = self._interval(segment) - (time.monotonic() - last)
                if pause > 0 and not state.done:
                    await asyncio.sleep(pause)  # let more pieces gather: one update carries them all
                segment = await self._show(segment, state.text)
                last = time.monotonic()
            await self._close(segment)
            await reader  # an error while producing the answer surfaces after what we had is shown
            return first
        finally:
            if not reader.done():
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    def _interval(self, segment: Segment) -> float:
        return STREAM_INTERVAL if segment.card_id else PATCH_INTERVAL

    async def _open(self, start: int, opener: str, text: str) -> Segment:
        raw = opener + text[start:]
        raw = raw[: R.answer_cut(raw)] if raw else raw
        if self.p.cardkit_ok:
            try:
                card_id = await self.p.create_card(
                    R.answer_card(raw, streaming=True, lang=self.lang), tenant=self.tenant
                )
            except FeishuError as exc:
                if exc.code in RATE_CODES:
                    raise
                self.p.cardkit_ok = False
                log.warning("CardKit unavailable (%s); streaming answers by editing messages instead", exc)
            else:
                content = json.dumps({"type": "card", "data": {"card_id": card_id}})
                ref = await self._post(content)
                return Segment(ref, start, opener, card_id=card_id, sequence=0, shown=raw)
        ref = await self._post(R.card_json(R.answer_card(raw, streaming=False, lang=self.lang)))
        return Segment(ref, start, opener, shown=raw)

    async def _post(self, content: str) -> MessageRef:
        async with self.p.chats.lock(self.channel):
            return await self.p.post_card(self.channel, content, thread=self.thread, uid=send_uuid(uuid.uuid4().hex, 0))

    async def _show(self, segment: Segment, text: str) -> Segment:
        raw = segment.opener + text[segment.start :]
        while not R.answer_fits(raw):
            cut = R.answer_cut(raw)
            await self._set(segment, raw[:cut])
            await self._close(segment)
            consumed = max(1, cut - len(segment.opener))
            segment = await self._open(segment.start + consumed, R.fence_opener(raw[:cut]), text)
            raw = segment.opener + text[segment.start :]
        await self._set(segment, raw)
        return segment

    async def _set(self, segment: Segment, raw: str) -> None:
        if raw == segment.shown:
            return
        if segment.card_id:
            try:
                segment.sequence += 1
                await self.p.set_card_text(segment.card_id, R.md_escape(raw), segment.sequence, tenant=self.tenant)
                segment.shown = raw
                return
            except FeishuError as exc:  # e.g. the card's streaming window expired: go on without CardKit
                if exc.code in RATE_CODES:
                    raise
                log.warning("CardKit update failed (%s); continuing the answer in an edited message", exc)
                replacement = await self._post(R.card_json(R.answer_card(raw, streaming=False, lang=self.lang)))
                segment.ref, segment.card_id, segment.shown = replacement, None, raw
                return
        await self.p.patch(segment.ref.id, R.answer_card(raw, streaming=False, lang=self.lang), tenant=self.tenant)
        segment.shown = raw

    async def _close(self, segment: Segment) -> None:
        if segment.card_id:
            segment.sequence += 1
            try:
                await self.p.close_card(segment.card_id, segment.shown, segment.sequence, tenant=self.tenant)
            except FeishuError as exc:  # the text is complete; Feishu ends streaming mode by itself later
                log.warning("could not close a streaming card: %s", exc)

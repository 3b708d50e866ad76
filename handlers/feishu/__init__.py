"""Feishu/Lark adapter: SDK payloads in → `bot.conversation.router` calls → Feishu API calls out.

api       the only module importing lark_oapi (it takes seconds to import, so `bot.runtime.processes`
          imports this package only when Feishu is configured): calls, retries, FeishuError
cards     FeishuCards: the API client, pacers and card post/edit/stream calls (platform and stream share them)
platform  FeishuPlatform: sending cards, edits, private notices (paced by handlers/pacing.py)
stream    AnswerStream: answers streamed into a CardKit card or an edited card
verify    CallbackVerifier: HTTP callbacks checked before the SDK sees them
events    FeishuEvents: messages and card buttons → the conversation core
adapter   FeishuAdapter: the long connection / HTTP route and the lifecycle

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

from handlers.feishu.adapter import FeishuAdapter
from handlers.feishu.api import FeishuApi, FeishuError
from handlers.feishu.events import FeishuEvents, incoming_message, message_text
from handlers.feishu.platform import FeishuPlatform
from handlers.feishu.verify import CallbackVerifier
from handlers.pacing import Pacer
from settings import Settings


def build_feishu(settings: Settings, chat, *, receive: bool) -> FeishuAdapter:
    """The Feishu adapter: `.platform` (register with the chat service), `.http_routes()`,
    `await .start()`, `await .close()`."""
    return FeishuAdapter(settings, chat, receive=receive)


__all__ = [
    "build_feishu",
    "FeishuAdapter",
    "FeishuPlatform",
    "FeishuApi",
    "FeishuEvents",
    "CallbackVerifier",
    "FeishuError",
    "Pacer",
    "incoming_message",
    "message_text",
]

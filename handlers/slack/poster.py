"""Posting to Slack at each channel's pace (`SlackPoster`): the Web API calls that the platform's
sends (platform.py) and a streamed answer (stream.py) are both made of, and the pace they keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from handlers.pacing import ConversationPacer
from handlers.slack import api


@dataclass
class Pacing:
    """Posting pace per channel (Slack: ~1 message/second/channel, short bursts allowed) and how
    often a streamed answer is pushed (native appends / fallback edits)."""

    per_second: float = 1.0
    burst: int = 3
    edit_interval: float = 1.0
    stream_interval: float = 1.0  # chat.appendStream is rate Tier 4 (~100 calls/min per workspace)

    def channel_pacer(self) -> ConversationPacer:
        """`burst` posts per `burst / per_second` seconds: the rate, with a short burst allowed."""
        return ConversationPacer("channel", self.burst, self.burst / max(self.per_second, 1e-6))


class SlackPoster:
    """A workspace's client, each channel's pace, and whether Slack's streaming methods work."""

    def __init__(self, client: api.AsyncWebClient, pacing: Pacing | None = None):
        self.client = client
        self.pacing = pacing or Pacing()
        self.pacer = self.pacing.channel_pacer()
        self.native_streaming = True  # switched off for good once Slack says the methods are unavailable

    # --- Web API calls --------------------------------------------------------------------------
    async def call(self, method: str, **kwargs) -> dict:
        """One Web API call; failures become a SlackError naming the method and Slack's error."""
        return await api.call(self.client, method, **kwargs)

    async def post(self, channel: str, payload: dict, thread: str | None, metadata: dict | None = None) -> str:
        """chat.postMessage, paced, in this channel's order; returns the ts."""
        async with self.pacer.lock(channel):
            return await self._post_locked(channel, payload, thread, metadata)

    async def _post_locked(self, channel: str, payload: dict, thread: str | None, metadata: dict | None = None) -> str:
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

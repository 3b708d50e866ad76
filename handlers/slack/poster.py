"""Posting to Slack at each channel's pace (`SlackPoster`): the Web API calls that the platform's
sends (platform.py) and a streamed answer (stream.py) are both made of, and the pace they keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from handlers.pacing import ConversationPacer
from handlers.slack import api
from handlers.slack.installs import FixedWorkspace


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
    """The workspaces' clients, each channel's pace, and whether Slack's streaming methods work.

    Every call names the channel (or person) it is made for: its address says the workspace,
    whose own token the call carries (`workspaces`, handlers/slack/installs.py), and the API is
    handed the bare id. A single-workspace bot has one client and bare addresses."""

    def __init__(self, client: api.AsyncWebClient, pacing: Pacing | None = None, workspaces=None):
        self.client = client
        self.workspaces = workspaces or FixedWorkspace(client)
        self.pacing = pacing or Pacing()
        self.pacer = self.pacing.channel_pacer()
        self.native_streaming = True  # switched off for good once Slack says the methods are unavailable

    # --- Web API calls --------------------------------------------------------------------------
    async def client_for(self, address: str) -> tuple[api.AsyncWebClient, str]:
        """(the client of the address's workspace, the id Slack knows); SlackNotInstalled when
        the workspace has no installation (nothing is sent)."""
        return await self.workspaces.client_for(address)

    async def call_in(self, address: str, method: str, **kwargs) -> dict:
        """One Web API call in `address`'s workspace; failures become a SlackError naming the
        method and Slack's error."""
        client, _ = await self.client_for(address)
        return await api.call(client, method, **kwargs)

    async def call(self, method: str, *, channel: str, **kwargs) -> dict:
        """One Web API call about `channel` (an address): made with its workspace's token, the
        bare channel id passed on."""
        client, local = await self.client_for(channel)
        return await api.call(client, method, channel=local, **kwargs)

    async def post(self, channel: str, payload: dict, thread: str | None, metadata: dict | None = None) -> str:
        """chat.postMessage, paced, in this channel's order; returns the ts."""
        async with self.pacer.lock(channel):
            return await self._post_locked(channel, payload, thread, metadata)

    async def _post_locked(self, channel: str, payload: dict, thread: str | None, metadata: dict | None = None) -> str:
        """chat.postMessage with the channel's lock already held."""
        args: dict[str, Any] = dict(text=payload["text"], unfurl_links=False, unfurl_media=False)
        if payload.get("blocks"):
            args["blocks"] = payload["blocks"]
        if thread:
            args["thread_ts"] = thread
        if metadata:
            args["metadata"] = metadata
        await self.pacer.wait_turn(channel)
        data = await self.call("chat.postMessage", channel=channel, **args)
        return str(data["ts"])

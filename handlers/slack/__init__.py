"""Slack, as a thin adapter: Bolt payloads in → bot.conversation.router calls; bot contents out → Web API calls.

  api       the only module importing slack_sdk / slack_bolt: the Web API client and its retries
            (429 waits Retry-After, transient failures back off), SlackError, the Bolt app
  poster    SlackPoster: the client, pacing and one Web API call (what platform and stream share)
  platform  SlackPlatform: sending (paced per channel through handlers/pacing.py, in order),
            crash-safe keyed sends, edits, ephemeral replies, uploads
  stream    answers streamed with Slack's chat streaming methods, or an edited message
  events    SlackAdapter: receiving (Socket Mode or signed HTTP), dedupe, buttons and the form

Tokens are never logged nor put in error messages.
"""

from __future__ import annotations

from handlers.slack.api import SlackError, make_client
from handlers.slack.events import SlackAdapter
from handlers.slack.platform import SlackPlatform
from handlers.slack.poster import Pacing
from handlers.slack.stream import StreamEscaper
from settings import Settings


def build_slack(settings: Settings, chat, *, receive: bool, pacing: Pacing | None = None) -> SlackAdapter:
    """The Slack adapter for these settings. `receive`: also take requests from Slack (Socket Mode
    or HTTP); the clock only posts."""
    return SlackAdapter(settings, chat, receive=receive, pacing=pacing)


__all__ = ["build_slack", "SlackAdapter", "SlackPlatform", "SlackError", "Pacing", "StreamEscaper", "make_client"]

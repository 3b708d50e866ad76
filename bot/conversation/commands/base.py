"""The shape of a command, and what its handler is given.

A command is one module under bot/conversation/commands/ exporting `COMMAND = Command(...)`: its words (the
name and aliases in both languages), its grammar (`parse`: the words after the verb → its
arguments, or a CommandError), its handler (`run`), and its usage line `usage.<name>` in the
message catalogue. The table in bot/conversation/commands/__init__.py lists them; nothing else needs an edit
to add one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from settings import Settings

from ...channels.subscriptions import ChannelConfig, Subscriptions
from ...core.chat_platform import ChatPlatform, Content, Conversation, Notice
from ...core.store import Store
from ...delivery.spec import DeliveryRunner
from ...i18n import text
from ..policy import ChannelPolicy
from ..ports import Analyses, QuestionAsker, SourceRegistry


@dataclass(frozen=True)
class CommandTools:
    """What the commands may use, and nothing else: the policy, the channel's subscriptions, the
    questions family, deliveries, and the sources and builder (for counting a request's
    commits). Built once by the composition root (bot/runtime/app.py)."""

    settings: Settings
    store: Store
    subs: Subscriptions
    policy: ChannelPolicy
    questions: QuestionAsker
    deliveries: DeliveryRunner
    sources: SourceRegistry
    builder: Analyses
    clock: Callable[[], datetime]
    help_text: Callable[[str, str], str]  # (lang, prefix) → the help: every command's usage


@dataclass(frozen=True)
class Request:
    """One command being run: who asked where, the channel's settings, and the tools every
    command shares."""

    tools: CommandTools
    conv: Conversation
    platform: ChatPlatform
    cfg: ChannelConfig
    prefix: str  # how commands are typed here: "/digest" on Slack and the console, "@bot" on Feishu

    @property
    def lang(self) -> str:
        return self.cfg.lang

    def say(self, key: str, /, **fields: Any) -> str:
        return text(self.lang, key, **fields)

    async def reply(self, content: Content) -> None:
        """In the conversation, for everyone (a change to the channel's subscriptions)."""
        await self.platform.send(self.conv.channel, content, thread=self.conv.thread)

    async def private(self, content: Content) -> None:
        """Only to the person who asked (help, listings, errors)."""
        await self.platform.reply_private(self.conv, content)

    def notice(self, body: str, kind: str = "info") -> Notice:
        return Notice(body, kind, self.lang)


@dataclass(frozen=True)
class Command:
    name: str  # the canonical verb; `usage.<name>` is its usage line in the catalogue
    aliases: tuple[str, ...]  # other words that mean it (Chinese, short forms)
    parse: Callable[[list[str]], Any]  # the words after the verb → the command's arguments
    run: Callable[[Request, Any], Awaitable[None]]

    @property
    def usage_key(self) -> str:
        return f"usage.{self.name}"

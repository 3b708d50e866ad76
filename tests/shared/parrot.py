"""Parrot, a third chat platform that exists only in tests (tests/test_platform_registry.py
registers its entry): what adding a platform takes besides its one registry entry — an adapter
(its transport: a signed-enough JSON callback on the public server) and a renderer (its own words
around the core's contents, its mention markup `((id))`).

A request names its workspace in the `X-Parrot-Team` header, which stands for what a real
platform verifies (Slack's signature and authorize context, Feishu's tenant_key): the adapter
qualifies the conversation and the person with it (bot/core/tenants.py), never with ids from the
body, so a body naming `T1/…` from team T2 is T2's `T2/T1/…`, not T1's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from bot.core import tenants
from bot.core.chat_platform import Content, Conversation, DigestParent, MessageRef
from bot.render.owner_lines import line_parts
from bot.render.text import render_text
from settings import Settings

NAME = "parrot"


def render(content: Content) -> str:
    """The renderer: the terminal's text, and each owner mapped to a Parrot person mentioned in
    Parrot's markup."""
    shown = render_text(content)
    if isinstance(content, DigestParent):
        for ping in content.owners:
            if ping.kind == "parrot_user":
                before, after = line_parts(content.digest.lang, ping)
                shown += f"\n{before}(({ping.id})){after}"
    return shown


class ParrotPlatform:
    name = NAME
    supports_files = False
    send_dedupe_window: float | None = None

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []  # (conversation, text), in order
        self.private: list[tuple[str, str, str]] = []  # (conversation, person, text)

    def _post(self, channel: str, content: Content) -> MessageRef:
        self.sent.append((channel, render(content)))
        return MessageRef(channel, str(len(self.sent)))

    async def send(
        self, channel: str, content: Content, *, thread: str | None = None, key: str | None = None
    ) -> MessageRef:
        return self._post(channel, content)

    async def send_unless_posted(
        self, channel: str, content: Content, *, thread: str | None = None, key: str, since: float
    ) -> MessageRef | None:
        return None

    async def update(self, ref: MessageRef, content: Content) -> MessageRef:
        self.sent.append((ref.channel, render(content)))
        return ref

    async def revise(self, ref: MessageRef, content: Content) -> bool:
        self.sent.append((ref.channel, render(content)))
        return True

    async def reply_private(self, conv: Conversation, content: Content) -> None:
        self.private.append((conv.channel, conv.user, render(content)))

    async def stream(
        self, channel: str, thread: str, pieces: AsyncIterator[str], *, conv: Conversation | None = None, lang: str = ""
    ) -> MessageRef:
        self.sent.append((channel, "".join([p async for p in pieces])))
        return MessageRef(channel, str(len(self.sent)), thread)

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        return None

    async def direct_channel(self, conv: Conversation) -> str | None:
        return None

    async def reaches(self, channel: str) -> bool:
        return True

    async def config_caveat(self, channel: str, questions: str, lang: str) -> str | None:
        return None


class ParrotAdapter:
    """The transport: `POST /parrot/events` with {"channel", "user", "text"} → a command."""

    def __init__(self, settings: Settings, router, *, receive: bool):
        self.router = router
        self.receive = receive
        self.platform = ParrotPlatform()
        self.started = False

    def http_routes(self) -> list:
        return [("POST", "/parrot/events", self._http)] if self.receive else []

    async def _http(self, request: web.Request) -> web.Response:
        team = request.headers.get("X-Parrot-Team") or None  # the verified workspace
        body = await request.json()
        conv = Conversation(
            platform=NAME,
            channel=tenants.qualify(team, str(body["channel"])),
            user=tenants.qualify(team, str(body["user"])),
        )
        await self.router.on_command(conv, str(body["text"]), prefix="/parrot")
        await self.router.drain()
        return web.json_response({"ok": True})

    async def start(self) -> None:
        self.started = True

    async def close(self) -> None:
        self.started = False


def build_parrot(settings: Settings, router, *, receive: bool) -> ParrotAdapter:
    """The factory its registry entry names (`tests.shared.parrot:build_parrot`)."""
    return ParrotAdapter(settings, router, receive=receive)

"""Slack end to end: the widgets repository, the fake Slack, a bot on both (`make_bot`), the Slack
platform alone, and what a reader sees of a message."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")
SECRET = "test-signing-secret"
CHANNEL = "C0001"
FAST = Pacing(per_second=500, burst=100, edit_interval=0.05, stream_interval=0.02)
HIGH_TITLE = "feat!: remove the legacy export API"
MEDIUM_TITLE = "feat: add --since flag <!channel> see <https://evil.example|docs>"
LOW_TITLE = "docs: explain the export formats"


def build_widgets(path: Path, day: date, tz=SH, extra: dict[str, str] | None = None) -> GitRepo:
    """A repository whose `day` has one high (breaking), one medium (new CLI flag, hostile title)
    and one low (docs) commit under the offline analyser. `extra`: more files in its first commit."""
    r = GitRepo(path, bare_origin="https://github.com/acme/widgets.git")
    at = lambda h: datetime(day.year, day.month, day.day, h, 0, tzinfo=tz)  # noqa: E731
    r.commit(
        "init",
        {
            "src/export.py": "def export_v1(rows):\n    return rows\n\n\ndef export_v2(rows):\n    return list(rows)\n",
            "src/cli.py": "import argparse\nparser = argparse.ArgumentParser()\n",
            "README.md": "hi\n",
            **(extra or {}),
        },
        when=at(1) - timedelta(days=1),
    )
    r.shas = {
        "high": r.commit(
            f"{HIGH_TITLE}\n\nBREAKING CHANGE: export_v1 is gone.",
            {"src/export.py": "def export_v2(rows):\n    return list(rows)\n"},
            when=at(10),
        ),
        "medium": r.commit(
            f"{MEDIUM_TITLE}\n\n<@U1> @here please review",
            {
                "src/cli.py": "import argparse\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument('--since', help='only recent rows')\n"
            },
            when=at(11),
        ),
        "low": r.commit(LOW_TITLE, {"README.md": "hi\n\nExport formats: v2.\n"}, when=at(12)),
    }
    return r


@pytest.fixture
def widgets(tmp_path) -> GitRepo:
    return build_widgets(tmp_path / "widgets", date(2026, 1, 28))


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@dataclass
class Bot:
    chat: App
    adapter: object
    sender: SlackSender
    runner: object
    services: Services

    async def settle(self) -> None:
        """Every handed-off request done, and the repository profiles they started learning in the
        background: that learning reads the history (GitHub: `GET /commits`), and a test counting
        requests must not have it land after its count (tests/test_alerts.py)."""
        await self.chat.drain()
        taste = self.services.builder.taste
        if taste is not None:
            await taste.settle()

    async def close(self) -> None:
        await self.sender.close()
        await self.chat.drain()
        await self.adapter.close()
        await self.runner.cleanup()
        await self.services.aclose()


async def serve_slack(settings) -> tuple[Services, App, Any, Any, str]:
    """The bot's core and its Slack adapter for `settings`, served over HTTP on 127.0.0.1:
    (services, app, adapter, the server's runner, its base URL)."""
    services = Services.build(settings)
    chat = App.build(services)
    adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
    chat.register(adapter.platform)
    runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
    return services, chat, adapter, runner, f"http://127.0.0.1:{bound_port(runner)}"


@pytest.fixture
async def make_bot(make_settings, slack, widgets):
    bots: list[Bot] = []

    async def build(**overrides) -> Bot:
        values = dict(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(widgets.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
        )
        values.update(overrides)
        services, chat, adapter, runner, base = await serve_slack(make_settings(**values))
        sender = SlackSender(f"{base}/slack/events", SECRET)
        bot = Bot(chat, adapter, sender, runner, services)
        bots.append(bot)
        return bot

    yield build
    for bot in bots:
        await bot.close()


def shown(message) -> str:
    """What a reader sees of a message: its block texts (or its text), entities decoded."""
    texts = [x for b in message.blocks for x in R.plain_texts(b)] if message.blocks else [message.text]
    return R.unescape("\n".join(texts))


def buttons(message) -> dict[str, dict]:
    return {e["action_id"]: e for b in message.blocks if b["type"] == "actions" for e in b["elements"]}


def by_title(messages, title: str):
    found = [m for m in messages if title in shown(m)]
    assert len(found) == 1, (title, [shown(m)[:80] for m in messages])
    return found[0]


async def digest_thread(bot: Bot, slack: FakeSlack, when: str = "2026-01-28"):
    status, _ = await bot.sender.slash(when)
    assert status == 200
    await bot.settle()
    parents = slack.top_level(CHANNEL)
    assert parents, slack.methods()
    parent = parents[-1]
    return parent, slack.replies(CHANNEL, parent.ts)


def shown_eph(e: dict) -> str:
    return "\n".join(x for b in e["blocks"] for x in R.plain_texts(b))


@pytest.fixture
async def platform(make_settings, slack, widgets):
    settings = make_settings(
        slack_bot_token=slack.token,
        slack_api_url=slack.url.rstrip("/"),  # no slash: fine
        default_repo=str(widgets.path),
    )
    services = Services.build(settings)
    chat = App.build(services)
    adapter = build_slack(settings, chat.router, receive=False, pacing=FAST)
    yield adapter.platform
    await adapter.close()
    await services.aclose()


async def answer_pieces(text: str, size: int = 700, delay: float = 0.0):
    for i in range(0, len(text), size):
        if delay:
            await asyncio.sleep(delay)
        yield text[i : i + size]

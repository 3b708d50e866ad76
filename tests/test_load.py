"""Load, bounded and on loopback: a 1,000-commit day, twenty channels asking for the same day at
once (in two "workers" that share only Redis), and 300 signed `/digest` commands at once through
the real HTTP endpoint and the job queue. What is asserted is what users would see: every commit
analysed by the LLM (no fallback), N + 1 LLM calls for everyone, every command answered, nobody
told the storage is unreachable."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import to_dict
from bot.core.window import day_window
from bot.delivery.spec import DeliverySpec
from bot.runtime.app import App
from bot.runtime.queue import Jobs, JobWorker
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.web import bound_port, build_app, build_ops_app, start_server
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo, bulk_commits

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 20)
SECRET = "load-signing-secret"
FAST = Pacing(per_second=500, burst=100, edit_interval=0.05, stream_interval=0.02)


def day_repo(path, commits: int) -> GitRepo:
    repo = GitRepo(path)
    bulk_commits(repo, commits, datetime(2026, 1, 20, 0, 5, tzinfo=SH), step_seconds=max(1, 86000 // commits))
    return repo


def llm_settings(make_settings, llm: FakeOpenAI, repo: GitRepo, **extra):
    return make_settings(
        default_repo=str(repo.path),
        openai_base_url=llm.url,
        openai_api_key="sk-load-test-000000",
        default_lang="en",
        **extra,
    )


async def test_a_thousand_commit_day_gets_a_thousand_llm_analyses(make_settings, tmp_path):
    repo = day_repo(tmp_path / "big", 1000)
    with FakeOpenAI(latency=0.01) as llm:
        settings = llm_settings(make_settings, llm, repo, llm_concurrency=16)
        services = Services.build(settings)
        try:
            digest = await services.builder.build(
                services.source(str(repo.path)), day_window(DAY, "Asia/Shanghai"), "en"
            )
        finally:
            await services.aclose()
    assert len(digest.entries) == 1000
    fallbacks = [e for e in digest.entries if e.analysis.origin != "llm" or e.error]
    assert fallbacks == []
    assert len(llm.requests) == 1001  # every commit once, plus the day's headline
    assert digest.notices == () and digest.headline_origin == "llm"  # nothing went wrong
    from bot.core import metrics

    page = metrics.exposition()[0].decode()
    assert 'digestbot_llm_calls_total{outcome="ok",purpose="complete"}' in page
    assert 'digestbot_llm_tokens_total{direction="in"}' in page


async def test_twenty_channels_asking_for_the_same_day_cost_n_plus_one_llm_calls(make_settings, tmp_path):
    """Two workers (separate Services, connection pools and event-loop tasks; shared Redis only)
    deliver the same day into twenty channels at once."""
    repo = day_repo(tmp_path / "day", 28)
    with FakeOpenAI(latency=0.2) as llm, FakeSlack() as slack:
        settings = llm_settings(make_settings, llm, repo, slack_bot_token=slack.token, slack_api_url=slack.url)
        workers = []
        for _ in range(2):
            services = Services.build(settings)
            chat = App.build(services)
            adapter = build_slack(settings, chat.router, receive=False, pacing=FAST)
            chat.register(adapter.platform)
            workers.append((services, chat, adapter))
        window = to_dict(day_window(DAY, "Asia/Shanghai"))
        specs = [
            DeliverySpec(
                platform="slack",
                channel=f"C{i:04d}",
                repo=str(repo.path),
                window=window,
                lang="en",
                key=f"{settings.redis_prefix}load:{i}",
                progress=True,
            )
            for i in range(20)
        ]
        try:
            outcomes = await asyncio.gather(*(workers[i % 2][1].deliveries.run(spec) for i, spec in enumerate(specs)))
        finally:
            for services, _chat, adapter in workers:
                await adapter.close()
                await services.aclose()
        assert outcomes == ["delivered"] * 20
        assert len(llm.requests) == 28 + 1
        for spec in specs:
            (parent,) = slack.top_level(spec.channel)
            assert "Daily update report" in parent.text or "Daily update report" in json.dumps(parent.blocks)
            texts = " ".join(m.text for m in slack.replies(spec.channel, parent.ts))
            numbers = sorted(int(n) for n in re.findall(r"handle edge case (\d+) ", texts))
            assert numbers == list(range(28))  # every commit, each once
        assert "fallback" not in slack.all_text().lower()


@pytest.fixture
async def web_and_worker(make_settings, tmp_path):
    """The web side (signed HTTP endpoint: verify, ack, enqueue) and a job worker, on one Redis."""
    repo = GitRepo(tmp_path / "widgets")
    bulk_commits(repo, 3, datetime(2026, 1, 28, 9, 0, tzinfo=SH), step_seconds=600)
    slack = FakeSlack().start()
    settings = make_settings(
        slack_bot_token=slack.token,
        slack_signing_secret=SECRET,
        slack_api_url=slack.url,
        default_repo=str(repo.path),
        default_lang="en",
        worker_max_jobs=32,
    )
    web_services = Services.build(settings)
    web_chat = App.build(web_services)
    web_adapter = build_slack(settings, web_chat.router, receive=True, pacing=FAST)
    web_chat.register(web_adapter.platform)
    web_chat.jobs = await Jobs.connect(settings)
    runner = await start_server(build_app(web_services.store, web_adapter.http_routes()), "127.0.0.1", 0)

    worker_services = Services.build(settings)
    worker_chat = App.build(worker_services)
    worker_adapter = build_slack(settings, worker_chat.router, receive=False, pacing=FAST)
    worker_chat.register(worker_adapter.platform)
    worker_chat.jobs = await Jobs.connect(settings)
    worker = JobWorker(settings, worker_chat)
    await worker.start()
    worker_chat.worker = worker
    sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
    yield slack, sender, web_chat, worker_chat
    await sender.close()
    await worker.close()
    await runner.cleanup()
    for chat, adapter, services in (
        (web_chat, web_adapter, web_services),
        (worker_chat, worker_adapter, worker_services),
    ):
        await chat.drain_local()
        await adapter.close()
        await chat.jobs.close()
        await services.aclose()
    slack.stop()


async def test_three_hundred_commands_at_once_are_all_answered(web_and_worker):
    slack, sender, web_chat, worker_chat = web_and_worker
    channels = [f"C{i:05d}" for i in range(300)]
    statuses = await asyncio.gather(
        *(sender.slash("2026-01-28", channel=c, user=f"U{i:05d}") for i, c in enumerate(channels))
    )
    assert [s for s, _ in statuses] == [200] * 300
    await web_chat.drain_local()
    await worker_chat.drain()
    for channel in channels:
        (parent,) = slack.top_level(channel)
        assert "Daily update report" in json.dumps(parent.as_api())
        assert len(slack.replies(channel, parent.ts)) >= 1
    everything = slack.all_text()
    assert "unreachable" not in everything and "Something went wrong" not in everything
    assert "127.0.0.1" not in everything


async def _no_parts() -> dict:
    return {}


async def test_with_no_free_worker_the_asker_hears_queued_then_gets_the_digest(make_settings, tmp_path):
    """Overload is "queued, position n", never an error: with no worker running, a command is
    acknowledged and its asker told where it stands; when a worker comes, it is answered."""
    repo = GitRepo(tmp_path / "widgets")
    bulk_commits(repo, 3, datetime(2026, 1, 28, 9, 0, tzinfo=SH), step_seconds=600)
    with FakeSlack() as slack:
        settings = make_settings(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(repo.path),
            default_lang="en",
        )
        services = Services.build(settings)
        chat = App.build(services)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        chat.jobs = await Jobs.connect(settings)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        ops = await start_server(build_ops_app(_no_parts, chat.jobs), "127.0.0.1", 0)  # for /metrics
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        worker = JobWorker(settings, chat)
        try:
            for i in range(2):
                status, _ = await sender.slash("2026-01-28", channel="CQ", user=f"U{i}")
                assert status == 200
            await chat.drain_local()
            told = [e["text"] for e in slack.ephemerals]
            assert told == [
                "⏳ Queued (position 1): the bot is busy; your request runs as soon as a worker is free.",
                "⏳ Queued (position 2): the bot is busy; your request runs as soon as a worker is free.",
            ]
            assert slack.top_level("CQ") == []
            await worker.start()
            chat.worker = worker
            await chat.drain()
            parents = slack.top_level("CQ")
            assert len(parents) == 2 and all("Daily update report" in p.text for p in parents)
            import aiohttp

            async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{bound_port(ops)}/metrics") as resp:
                page = await resp.text()
            assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
            assert 'digestbot_jobs_total{event="succeeded",kind="request"}' in page
            assert 'digestbot_deliveries_total{outcome="delivered",platform="slack"}' in page
            assert "digestbot_jobs_in_queue 0.0" in page
        finally:
            await sender.close()
            await worker.close()
            await runner.cleanup()
            await ops.cleanup()
            await adapter.close()
            await chat.jobs.close()
            await services.aclose()

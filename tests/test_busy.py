"""Busy repositories (issue 33 §3): a generated week of 569 commits at exact instants (Monday to
Sunday in Shanghai, tests/gitrepo.py) and a quiet week after it, through the console, Slack and
Feishu (fakes on loopback, real Redis, the offline analyser), at a fixed "now" (Thursday).

- `week` (`周报`) answers a week over REQUEST_MAX_COMMITS: one message, its building line saying
  how many commits it analyses;
- `/digest 上周` over the limit is refused with commands the bot accepts — the week's roll-up
  and a shorter range — and a quiet day's hint names one it accepts: each suggestion the bot
  prints is taken and run (and the suggestions those print), until none is new;
- analyses already made are free: after the roll-up, `/digest 上周` is a digest, not a refusal.

The LLM path at vLLM scale — a queued roll-up of a 1,000-commit week, each commit analysed once —
is the last test.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.queue import Jobs, JobWorker
from bot.runtime.services import Services
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.openai_server import FakeOpenAI, commit_facts
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo, bulk_commits
from tests.shared.console import _typing
from tests.shared.slack import FAST, SECRET, Bot, shown, shown_eph

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # Thursday 09:30 in Shanghai: last week is 19–25 January
WEEK = 569  # as many commits as the busy week
CHANNEL = "C0BUSY"
# A command the bot suggests: in backticks, starting with how commands are typed here (a usage
# line, with its [options] and <placeholders>, is not one).
SUGGESTED = re.compile(r"`((?:/digest|@\S+) [^`\[<…]+)`")
REFUSED = (
    "more than one request may analyse",
    "超过单次请求可分析的上限",
    "more than one weekly roll-up",
    "超过一份周报",
)


def busy_week(path) -> GitRepo:
    """569 commits from Monday 00:10 to Sunday ~23:00 (Shanghai), then nothing until "now"."""
    repo = GitRepo(path, bare_origin="https://github.com/acme/busy.git")
    step = (7 * 86400 - 2400) // WEEK
    # each adds a small file of its own: a routine week, mostly low (a few hundred thread replies
    # would only slow the test down)
    first = datetime(2026, 1, 19, 0, 10, tzinfo=SH)
    bulk_commits(repo, WEEK, first, step_seconds=step, title="chore: tidy {m} ({i})", path="src/m{m}/part_{i}.py")
    return repo


@pytest.fixture
def busy(tmp_path):
    return busy_week(tmp_path / "busy")


def suggestions(text: str) -> list[str]:
    return SUGGESTED.findall(text)


async def follow(run, first: str, limit: int = 8) -> list[tuple[str, str]]:
    """Run `first`, then every command the bot suggests in what it says, breadth first, each once.
    `run(command)` → what the bot said to it. Returns (command, said) in the order run."""
    queue, seen, ran = [first], set(), []
    while queue and len(ran) < limit:
        command = queue.pop(0)
        if command in seen:
            continue
        seen.add(command)
        said = await run(command)
        ran.append((command, said))
        queue += [s for s in suggestions(said) if s not in seen]
    return ran


def refused(said: str) -> bool:
    return any(words in said for words in REFUSED)


# --- Slack ------------------------------------------------------------------------------------------


@pytest.fixture
async def busy_bot(make_settings, busy):
    with FakeSlack() as slack:
        settings = make_settings(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(busy.path),
            default_lang="zh",
            default_tz="Asia/Shanghai",
        )
        services = Services.build(settings, clock=lambda: NOW)
        chat = App.build(services, clock=lambda: NOW)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        bot = Bot(chat, adapter, sender, runner, services)
        yield bot, slack
        await bot.close()


def slack_runner(bot: Bot, slack: FakeSlack):
    async def run(command: str) -> str:
        """What the channel and the asker read after `command`: its private lines and the
        messages posted (the last top-level one, its text and blocks)."""
        ephemerals, posts = len(slack.ephemerals), len(slack.top_level(CHANNEL))
        status, _ = await bot.sender.slash(command.removeprefix("/digest "), channel=CHANNEL)
        assert status == 200
        await bot.settle()
        said = [R.unescape(shown_eph(e)) for e in slack.ephemerals[ephemerals:]]
        said += [shown(m) for m in slack.top_level(CHANNEL)[posts:]]
        return "\n".join(said)

    return run


async def test_slack_a_busy_week_every_suggested_command_is_accepted(busy_bot):
    bot, slack = busy_bot
    run = slack_runner(bot, slack)
    ran = await follow(run, "/digest 上周")
    (_first, said), *rest = ran
    assert refused(said) and said.startswith("⚠️ acme/busy 在 2026-01-19..2026-01-25 有 569 个提交"), said
    # The week as one message comes first: its roll-up, then a shorter range; both accepted.
    rollup, shorter = suggestions(said)
    assert rollup == "/digest 周报 2026-01-25" and re.fullmatch(r"/digest 2026-01-2\d\.\.2026-01-25", shorter)
    assert [command for command, _ in rest] == [rollup, shorter]
    for command, answer in rest:
        assert not refused(answer), (command, answer)
    assert "每周汇总" in rest[0][1] and "569" in rest[0][1]  # the roll-up: one message over the whole week
    building = R.unescape(slack.calls_to("chat.postMessage")[0].params["text"])
    assert "要分析 569 个提交，完成后发在这里" in building

    # Its analyses are free now: the whole week is a digest, not a refusal.
    again = await run("/digest 上周")
    assert not refused(again) and "569" in again


async def test_slack_a_quiet_day_suggests_what_the_bot_then_accepts(busy_bot):
    bot, slack = busy_bot
    run = slack_runner(bot, slack)
    ran = await follow(run, "/digest 昨天")
    (_first, said), *rest = ran
    assert "2026-01-28" in said and not refused(said)
    # Last week is over REQUEST_MAX_COMMITS (nothing analysed yet): the hint is its roll-up…
    assert suggestions(said) == ["/digest 周报"], said
    assert [command for command, _ in rest] == ["/digest 周报"] and not refused(rest[0][1])
    # …and once the week is analysed, the whole of last week fits: the hint says so, and it runs.
    hinted = await run("/digest 2026-01-27")
    assert suggestions(hinted) == ["/digest 上周"]
    assert not refused(await run("/digest 上周"))


# --- the console ------------------------------------------------------------------------------------


async def test_console_the_week_answers_and_every_suggestion_runs(make_settings, busy):
    services = Services.build(
        make_settings(default_repo=str(busy.path), default_lang="en", default_tz="Asia/Shanghai"), clock=lambda: NOW
    )
    type_line = _typing(services)
    try:
        said = await type_line("/digest week")
        assert not refused(said) and "2026-01-19..2026-01-25" in said and "569" in said
        ran = await follow(type_line, "/digest 2026-01-21..2026-01-27 paths src/**")
        # everything is analysed now: that range fits, and says nothing of a limit
        assert all(not refused(s) for _, s in ran)
    finally:
        await services.aclose()

    fresh = Services.build(
        make_settings(
            default_repo=str(busy.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
            redis_prefix=f"busy{uuid.uuid4().hex[:8]}:",  # a store of its own: nothing analysed yet
        ),
        clock=lambda: NOW,
    )
    type_line = _typing(fresh)
    try:
        ran = await follow(type_line, "/digest last-week paths src/**")
        (_first, said), *rest = ran
        assert refused(said) and "`/digest week 2026-01-25 paths src/**`" in said
        assert rest and all(not refused(s) for _, s in rest), rest
    finally:
        await fresh.aclose()


# --- Feishu -----------------------------------------------------------------------------------------


async def test_feishu_a_busy_week_every_suggested_command_is_accepted(make_settings, busy):
    from tests.shared.feishu import GROUP, feishu_env

    async with feishu_env(make_settings, busy, default_lang="zh", clock=lambda: NOW) as env:

        async def run(command: str) -> str:
            before, private = len(env.fake.messages), len(env.fake.ephemerals)
            status, _ = await env.say(command.split(" ", 1)[1])  # the mention is the prefix
            assert status == 200
            await env.settle()
            said = [json.dumps(e["card"], ensure_ascii=False) for e in env.fake.ephemerals[private:]]
            said += [env.fake.shown(m) for m in env.fake.messages[before:] if m.chat_id == GROUP]
            return "\n".join(said)

        ran = await follow(run, "@bot 上周")
        (_first, said), *rest = ran
        assert refused(said) and "569" in said
        assert [command.split(" ", 1)[1] for command, _ in rest] == [s.split(" ", 1)[1] for s in suggestions(said)]
        assert len(rest) == 2 and all(not refused(s) for _, s in rest), rest


# --- the LLM path at vLLM scale: a queued roll-up of 1,000 commits, each analysed once ------------------


async def test_the_roll_up_of_a_thousand_commit_week_is_queued_answered_and_analyses_each_commit_once(
    make_settings, tmp_path
):
    repo = GitRepo(tmp_path / "vllm")
    bulk_commits(repo, 1000, datetime(2026, 1, 19, 0, 5, tzinfo=SH), step_seconds=(7 * 86400 - 600) // 1000)
    with FakeOpenAI() as llm, FakeSlack() as slack:
        settings = make_settings(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(repo.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
            openai_base_url=llm.url,
            openai_api_key="sk-busy-week-000000",
            llm_concurrency=16,
        )
        # the web side acknowledges and queues; a worker builds (shared Redis only)
        web = Services.build(settings, clock=lambda: NOW)
        web_chat = App.build(web, clock=lambda: NOW)
        web_adapter = build_slack(settings, web_chat.router, receive=True, pacing=FAST)
        web_chat.register(web_adapter.platform)
        web_chat.jobs = await Jobs.connect(settings)
        runner = await start_server(build_app(web.store, web_adapter.http_routes()), "127.0.0.1", 0)
        work = Services.build(settings, clock=lambda: NOW)
        work_chat = App.build(work, clock=lambda: NOW)
        work_adapter = build_slack(settings, work_chat.router, receive=False, pacing=FAST)
        work_chat.register(work_adapter.platform)
        work_chat.jobs = await Jobs.connect(settings)
        worker = JobWorker(settings, work_chat)
        await worker.start()
        work_chat.worker = worker
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        try:
            status, _ = await sender.slash("week", channel=CHANNEL)
            assert status == 200
            await asyncio.wait_for(_until_posted(slack, work_chat, web_chat), timeout=600)  # bounded, never hangs
        finally:
            await sender.close()
            await worker.close()
            await runner.cleanup()
            for chat, adapter, services in ((web_chat, web_adapter, web), (work_chat, work_adapter, work)):
                await chat.drain_local()
                await adapter.close()
                await chat.jobs.close()
                await services.aclose()
        (parent,) = slack.top_level(CHANNEL)
        text = shown(parent)
        assert "2026-01-19..2026-01-25" in text and "1,000 commits" in text and "fallback" not in text.lower()
        building = R.unescape(slack.calls_to("chat.postMessage")[0].params["text"])
        assert "1,000 commits to analyse" in building
        analysed = [commit_facts(r)[0] for r in llm.requests if commit_facts(r)[0]]
        assert len(analysed) == 1000 and len(set(analysed)) == 1000  # every commit analysed, none twice
        assert slack.ephemerals == []  # nothing refused, no error


async def _until_posted(slack: FakeSlack, *chats) -> None:
    """Until the roll-up replaced its building line (or the asker was told something privately)."""
    while not slack.ephemerals and not any(not m.text.startswith("⏳") for m in slack.top_level(CHANNEL)):
        await asyncio.sleep(0.2)
    for chat in chats:
        await chat.drain_local()

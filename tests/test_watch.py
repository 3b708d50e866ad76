"""Watches (issue 19, item 4), end to end: `watch owner/repo GLOB [at 09:00]` typed in a direct
message (signed slash commands into the real Slack adapter; the fake Slack Web API opens the DM
with conversations.open), the clock's tick at the person's time, the direct messages that follow
(one per commit touching the pattern, at most once per person even across a crash), the analyses
shared with the digests (the fake LLM is asked nothing twice), the queue's "watch" job, and the
terminal chat.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.queue import Jobs, JobWorker
from bot.runtime.services import Services
from bot.watch import Watches
from bot.watch.spec import watch_run
from handlers.console import ConsoleChat, ConsolePlatform
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.shared.slack import FAST, HIGH_TITLE, LOW_TITLE, MEDIUM_TITLE, SECRET, Bot, build_widgets, shown, shown_eph

NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai
DM = "D0001"  # where the person typed the command
IM = "DU0001"  # the bot's own IM with U0001, as conversations.open answers it


@pytest.fixture
def widgets(tmp_path):
    return build_widgets(tmp_path / "widgets", date(2026, 1, 28))


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def make_bot(make_settings, slack, widgets, llm):
    bots: list[Bot] = []

    async def build(**overrides) -> Bot:
        values = dict(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(widgets.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
            openai_base_url=llm.url,
            openai_api_key="sk-test-watch",
            catchup_minutes=180,
        )
        values.update(overrides)
        settings = make_settings(**values)
        services = Services.build(settings, clock=lambda: NOW)
        chat = App.build(services, clock=lambda: NOW)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        bot = Bot(chat, adapter, sender, runner, services)
        bots.append(bot)
        return bot

    yield build
    for bot in bots:
        await bot.close()


async def command(bot: Bot, text: str, channel: str = DM, user: str = "U0001") -> None:
    status, _ = await bot.sender.slash(text, channel=channel, user=user)
    assert status == 200
    await bot.settle()


async def tick(bot: Bot, now: datetime = NOW):
    return await bot.chat.make_clock(settings=bot.chat.settings, now=lambda: now).tick_watches(
        now, timedelta(minutes=180)
    )


def analyses_asked(fake: FakeOpenAI, since: int = 0) -> int:
    return sum(1 for r in fake.requests[since:] if '"bullets"' not in r["messages"][0]["content"])


# --- the direct messages ----------------------------------------------------------------------------


async def test_a_watch_sends_each_commit_touching_the_pattern_once_at_its_time(make_bot, slack, llm, widgets):
    bot = await make_bot()
    await command(bot, "watch acme/widgets src/** at 09:00")
    (confirmation,) = slack.top_level(DM)
    assert shown(confirmation) == (
        "👀 Watching `src/**` in acme/widgets: every day at 09:00 (Asia/Shanghai) you get "
        "a direct message with each commit of the day before that touches it."
    )
    assert [c.params["users"] for c in slack.calls_to("conversations.open")] == ["U0001"]

    assert await tick(bot, NOW - timedelta(hours=1)) == []  # 08:30: not yet
    assert slack.top_level(IM) == []
    ((watch, day, outcome),) = await tick(bot)
    assert (watch.glob, day, outcome) == ("src/**", date(2026, 1, 28), "sent 2")
    header, first, second = slack.top_level(IM)
    assert shown(header) == "👀 acme/widgets, 2026-01-28: 2 new commits touching `src/**`."
    assert HIGH_TITLE in shown(first) and MEDIUM_TITLE.split(" <")[0] in R.unescape(shown(second))  # oldest first
    assert LOW_TITLE not in slack.all_text()  # README.md only: not under src/
    assert "Adds a --since flag" in shown(first)  # the LLM's analysis
    assert analyses_asked(llm) == 2 and len(llm.requests) == 2  # no headline for a watch

    # The next tick, and a second pattern of the same person matching the same commit: nothing more.
    assert [o for _, _, o in await tick(bot)] == ["already done"]
    await command(bot, "watch acme/widgets src/export.py")
    assert sorted(o for _, _, o in await tick(bot)) == ["already done", "nothing new"]
    assert len(slack.top_level(IM)) == 3

    # Someone else watching the same repository gets their own messages, with no new LLM call.
    await command(bot, "watch acme/widgets src/cli.py", channel="D0002", user="U0002")
    await tick(bot)
    header2, only = slack.top_level("DU0002")
    assert "a new commit touching `src/cli.py`" in shown(header2) and "--since" in R.unescape(shown(only))
    assert len(llm.requests) == 2

    # A question in a watch message's thread is about its commit, like a digest thread's.
    event = bot.sender.message_event("what could this break?", channel=IM, thread_ts=first.ts, channel_type="im")
    asked = len(llm.requests)
    assert (await bot.sender.event(event))[0] == 200
    await bot.settle()
    (answer,) = slack.replies(IM, first.ts)
    assert answer.text.strip()
    question = json.dumps(llm.requests[asked:], ensure_ascii=False)  # the model was asked about that commit
    assert "what could this break?" in question and HIGH_TITLE in question


async def test_watches_reuse_the_digests_analyses_and_the_other_way_round(make_bot, slack, llm):
    bot = await make_bot()
    await command(bot, "2026-01-28", channel="C0001")  # the channel's digest: 3 analyses + the headline
    assert analyses_asked(llm) == 3 and len(llm.requests) == 4
    await command(bot, "watch acme/widgets src/**")
    await tick(bot)
    assert len(slack.top_level(IM)) == 3 and len(llm.requests) == 4  # the watch asked the LLM nothing

    # The other way round: what a watch analysed costs a later digest nothing.
    bot2 = await make_bot(redis_prefix="other:", default_lang="en")
    await command(bot2, "watch acme/widgets src/**", channel="D0009", user="U0009")
    await tick(bot2)
    asked = len(llm.requests)
    assert analyses_asked(llm) == 3 + 2
    await command(bot2, "2026-01-28", channel="C0002")
    assert analyses_asked(llm, asked) == 1  # only the README commit, which the watch did not need
    parent = shown(slack.top_level("C0002")[-1])
    assert "2 of 3 analyses cached (0 tokens)" in parent


async def test_a_run_killed_after_a_send_does_not_send_it_again(make_bot, slack, llm):
    bot = await make_bot()
    await command(bot, "watch acme/widgets src/**")
    await tick(bot)
    _header, _first, second = slack.top_level(IM)
    # Make Redis look as a run killed right after Slack accepted the second message leaves it: the
    # send was being tried (its "trying" state), Slack's own marker not yet holding the message's ts,
    # and the run not finished (no ledger).
    store = bot.services.store
    (watch,) = await Watches(store).all()
    run = watch_run(store, watch, date(2026, 1, 28))
    runner = bot.chat.watch_runner
    sent_keys = sorted(k.decode() for k in await store.r.keys(store.k("watchsent", "*")))
    states = {k: await store.get_json(k) for k in sent_keys}
    (second_key,) = [k for k, state in states.items() if state["id"] == second.ts]
    await store.set_json(second_key, {"at": NOW.timestamp()})
    await store.set_json(store.k("slack", "sent", second_key), {"pending": True})
    await store.delete(runner.job(run).done)

    assert await runner.run(run) == "sent 1"  # run again: it resumes the second message…
    assert len(slack.top_level(IM)) == 3  # …which Slack already has: found by its key, not posted twice
    assert slack.calls_to("conversations.history")  # looked up in the DM
    assert (await store.get_json(second_key))["done"] is True
    assert await runner.run(run) == "already done"


async def test_the_clock_queues_a_watch_job_that_a_worker_runs(make_bot, slack, make_settings):
    bot = await make_bot()
    await command(bot, "watch acme/widgets src/export.py")
    settings = bot.chat.settings
    jobs = await Jobs.connect(settings)
    bot.chat.jobs = jobs
    worker = JobWorker(settings, bot.chat)
    try:
        clock = bot.chat.make_clock(settings=settings, now=lambda: NOW, jobs=jobs)
        assert [o for _, _, o in await clock.tick_watches(NOW, timedelta(minutes=180))] == ["queued"]
        assert [o for _, _, o in await clock.tick_watches(NOW, timedelta(minutes=180))] == ["already queued"]
        assert slack.top_level(IM) == []
        await worker.start()
        bot.chat.worker = worker
        await bot.chat.drain()
        header, only = slack.top_level(IM)
        assert "a new commit touching `src/export.py`" in shown(header) and HIGH_TITLE in shown(only)
        assert [o for _, _, o in await clock.tick_watches(NOW, timedelta(minutes=180))] == ["already done"]
    finally:
        bot.chat.worker = None
        await worker.close()
        await jobs.close()


# --- the commands -----------------------------------------------------------------------------------


async def test_watches_lists_and_unwatch_removes(make_bot, slack):
    bot = await make_bot()
    await command(bot, "watches")
    assert shown(slack.top_level(DM)[-1]) == "You watch nothing yet: `/digest watch owner/repo GLOB [at 09:00]`."
    await command(bot, "watch acme/widgets src/** at 7:05")
    await command(bot, "watch acme/widgets docs/ tz UTC")
    await command(bot, "watch acme/widgets src/** at 08:15")  # the same pattern again: the time changes
    assert (
        shown(slack.top_level(DM)[-1])
        == "👀 Still watching `src/**` in acme/widgets, now every day at 08:15 (Asia/Shanghai)."
    )
    await command(bot, "watches")
    assert shown(slack.top_level(DM)[-1]).splitlines()[1:] == [
        "• acme/widgets `docs/` at 09:00 (UTC)",
        "• acme/widgets `src/**` at 08:15 (Asia/Shanghai)",
    ]
    await command(bot, "unwatch acme/widgets docs/")
    assert shown(slack.top_level(DM)[-1]) == "Stopped watching `docs/` in acme/widgets."
    await command(bot, "unwatch acme/widgets docs/")
    assert shown(slack.top_level(DM)[-1]) == (
        "You are not watching `docs/` in acme/widgets; `/digest watches` lists what you watch."
    )
    await command(bot, "unwatch acme/widgets")
    assert shown(slack.top_level(DM)[-1]) == "Stopped watching `src/**` in acme/widgets."
    assert await Watches(bot.services.store).all() == []


@pytest.mark.parametrize(
    "lang,typed,sentence,usage",
    [
        (
            "en",
            "watch acme/widgets src/**",
            "⚠️ Watches are personal: send `watch` to me in a direct message, and the daily messages come there.",
            "Usage: `/digest watch owner/repo GLOB",
        ),
        (
            "en",
            "watch",
            "⚠️ Say which repository and which paths to watch, e.g. `watch astral-sh/uv crates/uv-resolver/**`.",
            "Usage: `/digest watch owner/repo GLOB",
        ),
        (
            "en",
            "watch acme/widgets",
            "⚠️ Say which paths of acme/widgets to watch, e.g. `watch acme/widgets src/**`.",
            "Usage: `/digest watch",
        ),
        (
            "en",
            "watch acme/widgets ../secrets",
            "⚠️ '../secrets' climbs out of the repository with '..'.",
            "Usage: `/digest watch",
        ),
        (
            "en",
            "watch acme/widgets src/[abc",
            "⚠️ 'src/[abc' has an unclosed or empty [ ] in it.",
            "Usage: `/digest watch",
        ),
        (
            "en",
            "watch acme/widgets src/** at 25:00",
            "⚠️ 'at' must be a time like 09:30, not '25:00'.",
            "Usage: `/digest watch",
        ),
        ("en", "watch acme/widgets src/** tz Mars/Base", "Mars/Base", "Usage: `/digest watch"),
        ("en", "unwatch", "⚠️ Say which repository to stop watching", "Usage: `/digest unwatch owner/repo [GLOB]`"),
        ("en", "watches everything", "⚠️ `watches` takes no arguments.", "Usage: `/digest watches`"),
        (
            "zh",
            "watch acme/widgets src/**",
            "⚠️ 关注是个人的：请在与我的私聊中发送 `watch`，每天的消息也会发到那里。",
            "用法：`/digest watch owner/repo 路径模式",
        ),
        (
            "zh",
            "watch acme/widgets",
            "⚠️ 请说明要关注 acme/widgets 的哪些路径，例如 `watch acme/widgets src/**`。",
            "用法：`/digest watch",
        ),
    ],
)
async def test_bad_input_is_one_sentence_and_the_usage_in_the_channels_language(
    make_bot, slack, lang, typed, sentence, usage
):
    bot = await make_bot(default_lang=lang)
    await command(bot, typed, channel="C0001")  # in a channel: privately, to the person who typed it
    (reply,) = slack.ephemerals
    line = R.unescape(shown_eph(reply))
    assert line.startswith("⚠️") and sentence in line and usage in line, line
    assert len(line.splitlines()) == 2  # one sentence, one usage line
    assert reply["user"] == "U0001"
    assert await Watches(bot.services.store).all() == []


# --- the terminal -----------------------------------------------------------------------------------


async def test_a_watch_in_the_terminal(make_settings, widgets, llm):
    services = Services.build(
        make_settings(
            default_repo=str(widgets.path), default_lang="en", openai_base_url=llm.url, openai_api_key="sk-test-watch"
        ),
        clock=lambda: NOW,
    )
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    try:
        await ConsoleChat(chat.router, platform).handle(f"/digest watch {widgets.path} src/cli.py at 09:15")
        await chat.drain()
        assert "👀 Watching `src/cli.py` in acme/widgets: every day at 09:15 (Asia/Shanghai)" in out.getvalue()
        start = out.tell()
        await chat.make_clock(settings=services.settings, now=lambda: NOW).tick()
        shown_now = out.getvalue()[start:]
        assert "👀 acme/widgets, 2026-01-28: a new commit touching `src/cli.py`." in shown_now
        assert "--since" in shown_now and HIGH_TITLE not in shown_now
        await chat.make_clock(settings=services.settings, now=lambda: NOW).tick()
        assert out.getvalue()[start:] == shown_now  # sent once
    finally:
        await services.aclose()


# --- Feishu: the one-to-one chat ------------------------------------------------------------------


async def test_a_watch_in_a_feishu_one_to_one_chat(make_settings, tmp_path):
    from tests.gitrepo import GitRepo
    from tests.shared.feishu import DM as P2P
    from tests.shared.feishu import GROUP, feishu_env

    repo = GitRepo(tmp_path / "rocket")
    day = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)  # 11:00 in Asia/Shanghai
    repo.commit("feat: export since", {"src/export.py": "def export(since=None):\n    return since\n"}, when=day)
    repo.commit("docs: fix a typo", {"README.md": "hello\n"}, when=day.replace(hour=5))
    async with feishu_env(make_settings, repo, default_lang="en") as env:
        await env.say(f"watch {repo.path} src/**")  # in the group: said privately, nothing stored
        await env.settle()
        (ephemeral,) = env.fake.ephemerals
        assert "Watches are personal" in ephemeral["card"]["elements"][0]["text"]["content"]
        env.fake.p2p_chat(P2P)
        await env.say(f"watch {repo.path} src/**", mention_bot=False, chat_id=P2P, chat_type="p2p")
        await env.settle()
        assert "👀 Watching `src/**` in rocket" in env.fake.text_of(env.fake.messages[-1])
        await env.chat.make_clock(settings=env.chat.settings, now=lambda: NOW).tick_watches(NOW, timedelta(minutes=180))
        texts = [env.fake.text_of(m) for m in env.fake.top_level(P2P)]
        assert "👀 rocket, 2026-01-28: a new commit touching `src/**`." in texts[-2]
        assert "feat: export since" in texts[-1] and not any("typo" in t for t in texts)
        assert env.fake.top_level(GROUP) == []

"""Noise controls and the weekly roll-up end to end: signed slash commands into the real HTTP
endpoint, the real slack_sdk talking to the fake Slack Web API, real Redis, a real git monorepo
with bot authors (tests/noise_repo.py); the clock firing subscriptions; the Feishu fake through
lark-oapi; the fake LLM counting what it was asked."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from bot.core.models import to_dict
from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.noise_repo import (
    AUTOMATION_TITLE,
    CRATES,
    DAY_COMMITS,
    DOCS_LOWS,
    HIGH_TITLE,
    MEDIUM_TITLE,
    MONDAY_HIGH,
    build_monorepo,
)

SECRET = "test-signing-secret"
CHANNEL, OTHER = "C0001", "C0002"
FAST = Pacing(per_second=500, burst=100, edit_interval=0.05, stream_interval=0.02)
PUBLIC = "https://digest.example.com"
THURSDAY_0930 = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 in Shanghai: Wednesday's push
MONDAY_0930 = datetime(2026, 2, 2, 1, 30, tzinfo=UTC)  # 09:30 in Shanghai: last week's roll-up


@pytest.fixture(scope="module")
def mono(tmp_path_factory):
    return build_monorepo(tmp_path_factory.mktemp("noise") / "mono")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@dataclass
class Bot:
    chat: App
    sender: SlackSender
    settings: object

    async def command(self, text: str, channel: str = CHANNEL, user: str = "U0001") -> None:
        status, _ = await self.sender.slash(text, channel=channel, user=user)
        assert status == 200
        await self.chat.drain()


@pytest.fixture
async def make_bot(make_settings, slack, mono):
    closers = []

    async def build(**overrides) -> Bot:
        values = dict(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(mono.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
            catchup_minutes=60,
        )
        values.update(overrides)
        settings = make_settings(**values)
        services = Services.build(settings)
        chat = App.build(services)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)

        async def close():
            await sender.close()
            await chat.drain()
            await adapter.close()
            await runner.cleanup()
            if services.llm is not None:
                await services.llm.aclose()
            await services.aclose()

        closers.append(close)
        return Bot(chat, sender, settings)

    yield build
    for close in closers:
        await close()


def sections_text(message) -> str:
    """What a reader sees in a message's text blocks (menus' option labels left out)."""
    texts = []
    for block in message.blocks or []:
        if block["type"] in ("section", "header", "context"):
            texts += R.plain_texts(block)
    shown = R.unescape("\n".join(texts)) if message.blocks else R.unescape(message.text)
    return re.sub(r"<https?://[^|>]+\|([^>]+)>", r"\1", shown)  # a link reads as its label


def menu_shas(message) -> list[str]:
    return [
        o["value"].split(":", 1)[1]
        for b in message.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e.get("action_id") == "digest_low"
        for g in e["option_groups"][:1]
        for o in g["options"]
    ]


def ephemeral_text(e: dict) -> str:
    return R.unescape("\n".join(x for b in e["blocks"] for x in R.plain_texts(b)))


# --- the day's digest: bots collapsed, lows beyond fifteen as one line ---------------------------------


async def test_a_noisy_day_collapses_its_bots_and_lists_fifteen_lows(make_bot, slack, mono):
    bot = await make_bot(public_base_url=PUBLIC)
    await bot.command("2026-01-28")
    (parent,) = slack.top_level(CHANNEL)
    replies = slack.replies(CHANNEL, parent.ts)
    assert slack.block_errors == []
    texts = [sections_text(m) for m in replies]
    assert HIGH_TITLE in texts[0] and MEDIUM_TITLE in texts[1]  # high, then medium, in full
    assert f"{DAY_COMMITS} commits on 2026-01-28" in sections_text(parent)
    bots = [m for m in replies if "🤖 Dependency updates (15)" in sections_text(m)]
    assert len(bots) == 1  # fourteen Renovate updates and one Dependabot bump: one message
    shown_bots = sections_text(bots[0])
    assert (
        "🤖 renovate[bot]: 14 updates — clap 4.5.53 → 4.5.54, tokio 1.1.0 → 1.1.1, serde 1.2.0 → 1.2.1, …" in shown_bots
    )
    assert "🤖 dependabot[bot]: 1 update — actions/checkout 4 → 5" in shown_bots
    bot_shas = {sha for name, sha in mono.shas.items() if name.startswith(("renovate_", "dependabot"))}
    assert set(menu_shas(bots[0])) == bot_shas  # every collapsed commit is one menu pick away
    assert not any("Update Rust crate" in t for t in texts)  # never one line each
    # the automation bot's code change is not a dependency update: shown like anyone's
    assert sum(AUTOMATION_TITLE in t for t in texts) == 1
    (low,) = [m for m in replies if "Low importance" in sections_text(m)]
    assert replies[-1] is low and len(replies) == 4  # high, medium, bots, lows — not 2 + 36/15 messages
    shown_low = sections_text(low)
    assert f"🟢 Low importance ({DOCS_LOWS + 1})" in shown_low  # the people's lows (docs, the automation fix)
    assert shown_low.count("🟢 ") - 1 == 15
    assert f"… and {DOCS_LOWS + 1 - 15} more of low importance — full report: 📄 Full report" in shown_low
    links = re.findall(r"<(https://digest\.example\.com/r/[^|>]+)\|", json.dumps(low.blocks))
    assert len(links) == 1 and links[0] in json.dumps(parent.blocks)  # the parent's report link, once published
    # a question in the thread still reaches a collapsed commit
    thread = await bot.chat.threads.get("slack", CHANNEL, parent.ts)
    assert bot_shas <= {c.sha for c in thread.commits}
    # …and so does the bots' menu: Details of one collapsed update, shown to the one who asked
    menu = next(b for b in bots[0].blocks if b["type"] == "actions")
    await bot.sender.block_action(
        "digest_low",
        selected=f"details:{mono.shas['renovate_clap']}",
        block_id=menu["block_id"],
        message_ts=bots[0].ts,
        thread_ts=parent.ts,
    )
    await bot.chat.drain()
    (details,) = slack.ephemerals
    assert "Update Rust crate clap to v4.5.54" in ephemeral_text(details) and details["thread_ts"] == parent.ts


async def test_bots_show_lists_each_bot_commit(make_bot, slack):
    bot = await make_bot()
    await bot.command("2026-01-28 bots show")
    (parent,) = slack.top_level(CHANNEL)
    texts = [sections_text(m) for m in slack.replies(CHANNEL, parent.ts)]
    assert not any("🤖" in t for t in texts)
    low = texts[-1]
    lows = DOCS_LOWS + 1 + len(CRATES) + 1  # the bots' commits are lows like any other again
    assert f"🟢 Low importance ({lows})" in low and f"… and {lows - 15} more of low importance" in low
    assert "`config file on` attaches the full report" in low  # no report page configured: how to get them all


# --- path filters ---------------------------------------------------------------------------------


async def test_paths_filter_before_the_llm_and_the_header_says_so(make_bot, slack):
    with FakeOpenAI() as llm:
        bot = await make_bot(openai_base_url=llm.url, openai_api_key="sk-test")
        await bot.command("2026-01-28 paths backend/** exclude backend/tests/**")
        analyses = [r for r in llm.requests if "day_headline" not in json.dumps(r) and not r.get("stream")]
    (parent,) = slack.top_level(CHANNEL)
    head = sections_text(parent)
    assert f"🔎 paths backend/** · exclude backend/tests/** — 2 of {DAY_COMMITS} commits" in head
    replies = "\n".join(sections_text(m) for m in slack.replies(CHANNEL, parent.ts))
    assert MEDIUM_TITLE in replies and AUTOMATION_TITLE in replies
    assert HIGH_TITLE not in replies and "docs: fix typo" not in replies and "🤖" not in replies
    # only the two kept commits were sent to the LLM for analysis (plus at most the day's headline)
    assert 2 <= len(llm.requests) <= 3, [r["messages"][-1]["content"][:80] for r in llm.requests]
    assert len(analyses) >= 2


async def test_subscriptions_route_a_monorepo_and_list_says_how(make_bot, slack, mono):
    bot = await make_bot()
    repo = str(mono.path)
    await bot.command(f"subscribe {repo} at 09:30 paths frontend/**", channel=CHANNEL)
    await bot.command(f"subscribe {repo} at 09:30 paths backend/** exclude **/*.md bots show", channel=OTHER)
    assert "· paths frontend/**" in sections_text(slack.top_level(CHANNEL)[-1])
    await bot.command("list", channel=OTHER)
    listing = ephemeral_text(slack.ephemerals[-1])
    assert "daily at 09:30 (Asia/Shanghai)" in listing and "paths backend/** · exclude **/*.md · bots shown" in listing
    outcomes = {
        s.channel: o for s, _, o in await bot.chat.make_clock(settings=bot.settings, now=lambda: THURSDAY_0930).tick()
    }
    assert outcomes == {CHANNEL: "delivered", OTHER: "delivered"}
    front, back = (slack.top_level(c)[-1] for c in (CHANNEL, OTHER))
    front_all = sections_text(front) + "".join(sections_text(m) for m in slack.replies(CHANNEL, front.ts))
    back_all = sections_text(back) + "".join(sections_text(m) for m in slack.replies(OTHER, back.ts))
    assert HIGH_TITLE in front_all and MEDIUM_TITLE not in front_all and AUTOMATION_TITLE not in front_all
    assert MEDIUM_TITLE in back_all and AUTOMATION_TITLE in back_all and HIGH_TITLE not in back_all
    assert f"1 of {DAY_COMMITS} commits" in front_all and f"2 of {DAY_COMMITS} commits" in back_all
    # the clock's build job (run ahead of the deliveries, in a worker) builds the filtered digest
    from bot.core.models import to_dict
    from bot.core.window import day_window
    from tests.noise_repo import DAY

    build = {
        "repo": repo,
        "branch": None,
        "window": to_dict(day_window(DAY, "Asia/Shanghai")),
        "lang": "en",
        "paths": ["frontend/**"],
        "exclude": [],
    }
    assert await bot.chat.run_build(build) == "1 commits"
    await bot.command(f"subscribe {repo} paths none", channel=CHANNEL)  # a filter can be cleared
    (sub,) = await bot.chat.subs.for_channel("slack", CHANNEL)
    assert sub.paths == () and sub.at == "09:30"


# --- author filters ------------------------------------------------------------------------------


async def test_authors_keep_only_theirs_and_the_header_says_so(make_bot, slack, mono):
    bot = await make_bot()
    await bot.command("2026-01-28")  # the whole day first: the filtered one is not its cached copy
    await bot.command("2026-01-28 authors ada")
    whole, parent = slack.top_level(CHANNEL)
    assert "🔎" not in sections_text(whole)
    assert f"🔎 authors ada — 2 of {DAY_COMMITS} commits" in sections_text(parent)
    shown = "\n".join(sections_text(m) for m in slack.replies(CHANNEL, parent.ts))
    assert HIGH_TITLE in shown and MEDIUM_TITLE in shown  # Ada Lovelace <ada@example.com>: her login
    assert "docs: fix typo" not in shown and AUTOMATION_TITLE not in shown and "🤖" not in shown
    thread = await bot.chat.threads.get("slack", CHANNEL, parent.ts)
    assert {c.sha for c in thread.commits} == {mono.shas["high"], mono.shas["medium"]}  # questions see hers alone


async def test_the_filters_alone_are_yesterdays_digest_so_filtered(make_bot, slack, mono):
    # `/digest authors ada`, `/digest paths backend/**`: the date is optional before the options too
    bot = await make_bot()
    bot.chat.now.read = lambda: datetime(2026, 1, 29, 2, 0, tzinfo=UTC)  # 10:00 in Shanghai: yesterday is the 28th
    await bot.command("authors ada")
    await bot.command("paths backend/** exclude-authors automation-bot")
    await bot.command("authors")
    by_ada, backend = slack.top_level(CHANNEL)
    assert f"🔎 authors ada — 2 of {DAY_COMMITS} commits" in sections_text(by_ada)
    assert "2026-01-28" in sections_text(by_ada)
    assert f"🔎 paths backend/** · exclude-authors automation-bot — 1 of {DAY_COMMITS} commits" in sections_text(
        backend
    )
    [refusal] = [ephemeral_text(e) for e in slack.ephemerals]
    assert "'authors' needs at least one author's name or login" in refusal and "Unknown command" not in refusal


async def test_exclude_authors_drops_the_bots_and_combines_with_paths(make_bot, slack):
    bot = await make_bot()
    await bot.command('2026-01-28 exclude-authors renovate DEPENDABOT[bot] "grace hopper"')
    (parent,) = slack.top_level(CHANNEL)
    head = sections_text(parent)
    assert f'🔎 exclude-authors renovate DEPENDABOT[bot] "grace hopper" — 3 of {DAY_COMMITS} commits' in head
    shown = "\n".join(sections_text(m) for m in slack.replies(CHANNEL, parent.ts))
    assert all(t in shown for t in (HIGH_TITLE, MEDIUM_TITLE, AUTOMATION_TITLE))
    assert "🤖" not in shown and "Update Rust crate" not in shown and "docs: fix typo" not in shown
    await bot.command("2026-01-28 paths backend/** exclude-authors automation-bot")
    both = slack.top_level(CHANNEL)[-1]
    assert f"🔎 paths backend/** · exclude-authors automation-bot — 1 of {DAY_COMMITS} commits" in sections_text(both)
    shown = "\n".join(sections_text(m) for m in slack.replies(CHANNEL, both.ts))
    assert MEDIUM_TITLE in shown and AUTOMATION_TITLE not in shown and HIGH_TITLE not in shown


async def test_request_max_commits_counts_after_the_author_filter(make_bot, slack):
    bot = await make_bot(request_max_commits=25)
    await bot.command("2026-01-28")
    (refused,) = slack.ephemerals
    assert f"{DAY_COMMITS:,} commits" in ephemeral_text(refused) and slack.top_level(CHANNEL) == []
    await bot.command("2026-01-28 exclude-authors renovate")  # 38 - 14 = 24: within the limit
    assert len(slack.ephemerals) == 1
    (parent,) = slack.top_level(CHANNEL)
    assert f"🔎 exclude-authors renovate — {DAY_COMMITS - len(CRATES)} of {DAY_COMMITS} commits" in sections_text(
        parent
    )
    # over the limit across two days: the narrower command suggested keeps the author filter, quoted
    # (a store of its own: the analyses just made are free, and the first bot's store holds them)
    bot = await make_bot(request_max_commits=3, redis_prefix=f"fresh{uuid.uuid4().hex[:8]}:")
    await bot.command('2026-01-27..2026-01-28 exclude-authors renovate dependabot "grace hopper"')
    said = ephemeral_text(slack.ephemerals[-1])
    assert "2026-01-27..2026-01-28 has 4 commits in acme/mono, more than one request may analyse (3)" in said
    assert (
        'try a shorter range: `/digest 2026-01-28 exclude-authors renovate dependabot "grace hopper"` (3 commits)'
        in said
    )


async def test_a_subscription_by_author_pushes_only_theirs_and_can_be_cleared(make_bot, slack, mono):
    bot = await make_bot()
    repo = str(mono.path)
    await bot.command(f'subscribe {repo} at 09:30 authors "Grace Hopper" exclude-authors dependabot')
    assert '· authors "Grace Hopper" · exclude-authors dependabot' in sections_text(slack.top_level(CHANNEL)[-1])
    await bot.command("list")
    assert 'daily at 09:30 (Asia/Shanghai) · en · min low · authors "Grace Hopper"' in ephemeral_text(
        slack.ephemerals[-1]
    )
    ticks = await bot.chat.make_clock(settings=bot.settings, now=lambda: THURSDAY_0930).tick()
    assert [o for _, _, o in ticks] == ["delivered"]
    push = slack.top_level(CHANNEL)[-1]
    shown = sections_text(push) + "".join(sections_text(m) for m in slack.replies(CHANNEL, push.ts))
    assert f"{DOCS_LOWS} of {DAY_COMMITS} commits" in shown and "docs: fix typo" in shown
    assert HIGH_TITLE not in shown and MEDIUM_TITLE not in shown and "🤖" not in shown
    # the clock's build job (run ahead of the deliveries, in a worker) builds the filtered digest
    from bot.core.window import day_window
    from tests.noise_repo import DAY

    build = {
        "repo": repo,
        "branch": None,
        "window": to_dict(day_window(DAY, "Asia/Shanghai")),
        "lang": "en",
        "paths": [],
        "exclude": [],
        "authors": ["Grace Hopper"],
        "exclude_authors": [],
    }
    assert await bot.chat.run_build(build) == f"{DOCS_LOWS} commits"
    await bot.command(f"subscribe {repo} authors none")  # a filter can be cleared, the other kept
    (sub,) = await bot.chat.subs.for_channel("slack", CHANNEL)
    assert sub.authors == () and sub.exclude_authors == ("dependabot",) and sub.at == "09:30"


# --- the weekly roll-up -----------------------------------------------------------------------------


async def test_a_weekly_subscription_is_fired_by_the_clock_once(make_bot, slack, mono):
    bot = await make_bot(public_base_url=PUBLIC)
    await bot.command(f"subscribe {mono.path} weekly mon 09:30")
    confirmation = sections_text(slack.top_level(CHANNEL)[-1])
    assert "last week's roll-up every Mon at 09:30 (Asia/Shanghai)" in confirmation
    await bot.command(f"subscribe {mono.path}")  # a daily push of the same repository, beside it
    assert len(await bot.chat.subs.for_channel("slack", CHANNEL)) == 2
    before = len(slack.top_level(CHANNEL))
    ticks = await bot.chat.make_clock(settings=bot.settings, now=lambda: MONDAY_0930).tick()
    assert [(s.weekly, str(day), o) for s, day, o in ticks if s.weekly] == [(True, "2026-01-26", "delivered")]
    rollups = [m for m in slack.top_level(CHANNEL)[before:] if "Weekly roll-up" in sections_text(m)]
    assert len(rollups) == 1
    (msg,) = rollups
    shown = sections_text(msg)
    assert "Weekly roll-up (2026-01-26..2026-02-01) · acme/mono" in shown
    # high and medium by area, each with its day; the bots as lines; the lows counted, never listed
    assert re.search(
        r"\*backend \(2\)\*\n🔴 Mon 01-26 `[0-9a-f]{7}` feat\(backend\)!: remove the v1 export endpoint "
        r"— The commit declares a breaking change.*\n🟡 Wed 01-28 `[0-9a-f]{7}` feat: add a --since flag "
        r"to the backend CLI\n\*frontend \(1\)\*\n🔴 Wed 01-28 `[0-9a-f]{7}` feat\(frontend\)!",
        shown,
    )
    assert "🤖 renovate[bot]: 14 updates — clap 4.5.53 → 4.5.54" in shown
    lows = DOCS_LOWS + 2  # docs fixes, the automation fix, the router test
    assert f"🟢 Low importance, not listed: {lows} — full report: 📄 Full report" in shown
    assert "docs: fix typo" not in shown and "cover the router" not in shown
    assert slack.replies(CHANNEL, msg.ts) == []  # one message, no thread of commits
    again = await bot.chat.make_clock(settings=bot.settings, now=lambda: MONDAY_0930).tick()
    assert [o for s, _, o in again if s.weekly] == ["already delivered"]
    assert sum("Weekly roll-up" in sections_text(m) for m in slack.top_level(CHANNEL)) == 1
    # its thread answers questions about any commit of the week
    thread = await bot.chat.threads.get("slack", CHANNEL, msg.ts)
    assert mono.shas["monday_high"] in {c.sha for c in thread.commits}


async def test_week_on_demand_in_english_and_chinese(make_bot, slack, mono):
    bot = await make_bot()
    await bot.command(f"week 2026-01-28 {mono.path} paths backend/**")
    (msg,) = slack.top_level(CHANNEL)
    shown = sections_text(msg)
    assert "Weekly roll-up (2026-01-26..2026-02-01)" in shown and "🔎 paths backend/**" in shown
    assert MONDAY_HIGH in shown and HIGH_TITLE not in shown
    assert "Low importance, not listed: 1 (`config file on` attaches the full report)" in shown
    assert slack.replies(CHANNEL, msg.ts) == []
    await bot.command("config lang zh")
    await bot.command(f"周报 2026-01-28 {mono.path}")
    zh = sections_text(slack.top_level(CHANNEL)[-1])
    assert "每周汇总（2026-01-26..2026-02-01）" in zh and "周一 01-26" in zh and "周三 01-28" in zh
    assert "🤖 renovate[bot]：14 个更新 — clap 4.5.53 → 4.5.54，" in zh


@pytest.mark.parametrize(
    "lang,text,sentence,usage",
    [
        (
            "en",
            "week 2026-01-19..2026-01-25",
            "⚠️ 'week' takes one day (the ISO week holding it), not the range",
            "Usage: `/digest week [DATE]",
        ),
        (
            "zh",
            "week 2026-01-19..2026-01-25",
            "⚠️ week 只接受一个日期（取它所在的 ISO 周），不能是范围",
            "用法：`/digest week [日期]",
        ),
        ("en", "2026-01-28 paths /backend/**", "⚠️ '/backend/**' starts with /", "Usage: `/digest [DATE|"),
        ("zh", "2026-01-28 paths /backend/**", "⚠️ “/backend/**”以 / 开头", "用法：`/digest [日期|"),
        ("en", "subscribe acme/mono weekly funday", "⚠️ 'funday' is not a day of the week", "Usage: `/digest subscribe"),
        ("zh", "subscribe acme/mono weekly funday", "⚠️ “funday”不是星期几", "用法：`/digest subscribe"),
        (
            "en",
            "subscribe acme/mono bots sometimes",
            "⚠️ bots must be collapse or show, not 'sometimes'.",
            "Usage: `/digest subscribe",
        ),
        ("zh", "week 2026-13-45", "⚠️ “2026-13-45”不是真实存在的日期。", "用法：`/digest week"),
        ("en", "week 2099-01-05", "⚠️ 2099-01-05 is in the future", "Usage: `/digest week"),
        (
            "en",
            "2026-01-28 authors",
            "⚠️ 'authors' needs at least one author's name or login, e.g. authors dependabot[bot].",
            "[authors NAME …] [exclude-authors NAME …]",
        ),
        ("zh", "2026-01-28 exclude-authors", "⚠️ “exclude-authors”至少需要一个作者名或登录名", "用法：`/digest [日期|"),
        ("en", 'subscribe acme/mono authors "Grace', "⚠️ The quote in '\"Grace' is not closed", "[authors NAME …|none]"),
        ("zh", "week authors " + "x" * 101, "⚠️ “" + "x" * 79 + "…”作为作者名或登录名太长了", "用法：`/digest week"),
    ],
)
async def test_bad_input_is_one_private_sentence_and_the_usage(make_bot, slack, lang, text, sentence, usage):
    bot = await make_bot(default_lang=lang)
    await bot.command(text)
    (said,) = slack.ephemerals
    line = ephemeral_text(said)
    assert line.startswith(sentence) and usage in line, line
    assert len(line.split("\n")) == 2  # one sentence, one usage line
    assert slack.top_level(CHANNEL) == [] and await bot.chat.subs.for_channel("slack", CHANNEL) == []


# --- Feishu: the same content as cards ----------------------------------------------------------------


async def test_feishu_collapses_bots_into_a_panel_and_posts_the_week_as_one_card(make_settings, mono):
    from tests.shared.feishu import GROUP, feishu_env

    async with feishu_env(make_settings, mono.repo) as env:  # DEFAULT_LANG: zh
        _parent, replies = await env.digest()
        cards = [env.fake.card(m) for m in replies]
        (bots,) = [c for c in cards if "依赖更新 (15)" in c["header"]["title"]["content"]]
        body = json.dumps(bots, ensure_ascii=False).replace("\u200b", "")  # the zero-width breaks after ]
        assert "🤖 renovate[bot]：14 个更新 — clap 4.5.53 → 4.5.54，tokio 1.1.0 → 1.1.1，serde 1.2.0 → 1.2.1，…" in body
        panels = [e for e in bots["body"]["elements"] if e.get("tag") == "collapsible_panel"]
        assert [p["expanded"] for p in panels] == [False, False]  # one per bot, folded
        # each commit a line (and a row of level buttons under it)
        assert sum("Update Rust crate" in e.get("content", "") for e in panels[0]["elements"]) == len(CRATES)
        (low,) = [c for c in cards if "低重要度变更" in c["header"]["title"]["content"]]
        assert f"… 另有 {DOCS_LOWS + 1 - 15} 个低重要度提交未在此列出" in json.dumps(low, ensure_ascii=False)
        assert len(replies) == 4

        status, _ = await env.say(f"周报 2026-01-28 {mono.path}")
        assert status == 200
        await env.settle()
        week = env.fake.top_level(GROUP)[-1]
        card = env.fake.card(week)
        assert card["header"]["title"]["content"] == "每周汇总（2026-01-26..2026-02-01）"
        text = env.fake.markdown_of(week).replace("\u200b", "")
        assert "**frontend (1)**" in text and "**backend (2)**" in text and "周一 01-26" in text
        assert f"🟢 {DOCS_LOWS + 2} 个低重要度提交未列出" in text and "docs: fix typo" not in text
        assert env.fake.thread(week.message_id) == []


# --- the command line ----------------------------------------------------------------------------------

# `run` (a real `python -m bot` process) comes from tests/conftest.py


def test_cli_digest_takes_the_path_filter(run, mono):
    proc = run(
        "digest",
        "--repo",
        str(mono.path),
        "--date",
        "2026-01-28",
        "--lang",
        "en",
        "--paths",
        "backend/**",
        "--exclude",
        "backend/tests/**",
    )
    assert proc.returncode == 0, proc.stderr
    assert f"> 🔎 paths backend/\\*\\* · exclude backend/tests/\\*\\* — 2 of {DAY_COMMITS} commits" in proc.stdout
    assert MEDIUM_TITLE in proc.stdout and HIGH_TITLE not in proc.stdout
    data = json.loads(
        run(
            "digest", "--repo", str(mono.path), "--date", "2026-01-28", "--format", "json", "--paths", "frontend/**"
        ).stdout
    )["digests"][0]
    assert (data["paths"], data["exclude"], data["filtered_out"], len(data["entries"])) == (
        ["frontend/**"],
        [],
        DAY_COMMITS - 1,
        1,
    )
    for lang, sentence in (
        ("en", "error: '/backend/**' starts with /, but globs are relative"),
        ("zh", "错误：“/backend/**”以 / 开头"),
    ):
        bad = run("digest", "--repo", str(mono.path), "--lang", lang, "--paths", "/backend/**")
        assert bad.returncode == 2 and "Traceback" not in bad.stderr
        assert bad.stderr.strip().startswith(sentence) and "\n" not in bad.stderr.strip()


def test_cli_digest_takes_the_author_filter(run, mono):
    data = json.loads(
        run(
            "digest",
            "--repo",
            str(mono.path),
            "--date",
            "2026-01-28",
            "--format",
            "json",
            "--authors",
            "Grace Hopper",
            "ada",
            "--exclude-authors",
            "ADA",
        ).stdout
    )["digests"][0]
    assert (data["authors"], data["exclude_authors"], data["filtered_out"]) == (
        ["Grace Hopper", "ada"],
        ["ADA"],
        DAY_COMMITS - DOCS_LOWS,
    )
    assert {e["commit"]["author"] for e in data["entries"]} == {"Grace Hopper"} and len(data["entries"]) == DOCS_LOWS
    assert {e["commit"]["login"] for e in data["entries"]} == {"grace"}
    proc = run(
        "digest",
        "--repo",
        str(mono.path),
        "--date",
        "2026-01-28",
        "--lang",
        "en",
        "--paths",
        "backend/**",
        "--exclude-authors",
        "automation-bot[bot]",
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        f"> 🔎 paths backend/\\*\\* · exclude-authors automation-bot\\[bot\\] — 1 of {DAY_COMMITS} commits"
        in proc.stdout
    )
    assert MEDIUM_TITLE in proc.stdout and AUTOMATION_TITLE not in proc.stdout
    for lang, sentence in (
        ("en", "error: '" + "x" * 79 + "…' is too long for an author's name or login"),
        ("zh", "错误：“" + "x" * 79 + "…”作为作者名或登录名太长了"),
    ):
        bad = run("digest", "--repo", str(mono.path), "--lang", lang, "--authors", "x" * 101)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr
        assert bad.stderr.strip().startswith(sentence) and "\n" not in bad.stderr.strip()
    many = run("digest", "--repo", str(mono.path), "--lang", "en", "--exclude-authors", *(f"u{i}" for i in range(21)))
    assert many.returncode == 2 and many.stderr.strip() == "error: '--exclude-authors' takes at most 20 names."


# --- the clock's shared builds --------------------------------------------------------------------------

from tests.shared.schedule import NOW as CLOCK_NOW  # noqa: E402 — the real queue (arq on Redis)


async def test_a_filtered_digest_is_its_own_build_job_and_a_weekly_one_too(clock_chat):
    from bot.core.models import Subscription

    chat, settings, jobs = clock_chat
    for channel, paths in (("a", ("frontend/**",)), ("b", ("backend/**",)), ("c", ("frontend/**",)), ("d", ())):
        await chat.subs.upsert(
            Subscription("console", channel, "acme/widgets", at="09:00", tz="Asia/Shanghai", paths=paths)
        )
    # 2026-01-29 is a Thursday: a weekly roll-up due at 09:00 on Thursdays posts the week of the 19th
    await chat.subs.upsert(Subscription("console", "e", "acme/widgets", at="09:00", tz="Asia/Shanghai", weekday="thu"))
    done = {
        (s.channel, str(day), o)
        for s, day, o in await chat.make_clock(settings=settings, now=lambda: CLOCK_NOW, jobs=jobs).tick()
    }
    assert ("e", "2026-01-19", "queued") in done and len(done) == 5
    queued = [j.decode() for j in await jobs.pool.zrange(jobs.queue, 0, -1)]
    builds = [j for j in queued if ":build:" in j]
    assert len(builds) == 4  # frontend, backend, unfiltered day — and the week
    assert sum(":deliver:" in j and "week-2026-W04" in j for j in queued) == 1

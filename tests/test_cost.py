"""Cost you can see and cap (issue 19, item 5), end to end: signed `/digest` requests into the real
Slack adapter (fake Slack Web API, real slack_sdk/Bolt), the fake LLM endpoint reporting `usage`,
real Redis, a real git repository; the terminal chat too.

- every digest's parent says what its analyses cost in tokens (and money with prices set); a
  digest read again from the cache costs 0 and says so; analyses another digest made cost 0;
- past LLM_MONTHLY_TOKEN_BUDGET, analyses use the offline analyser and the digest says so once,
  in the channel's language, with the reset date; no request reaches the endpoint;
- REQUEST_MAX_COMMITS refuses a larger on-demand range with one sentence before any LLM call;
- /metrics shows the tokens: in/out counters, per digest, the month's total.
"""

from __future__ import annotations

import asyncio
import io
import re
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from bot.analysis.cost import Budget
from bot.core import metrics
from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, build_ops_app, start_server
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.shared.slack import FAST, SECRET, Bot, build_widgets, shown, shown_eph

NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai
CHANNEL = "C0001"
COST = re.compile(r"💰 ([\d,]+) tokens \(([\d,]+) in / ([\d,]+) out\)")


@pytest.fixture
def widgets(tmp_path):
    from datetime import date

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
            openai_api_key="sk-test-cost",
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


async def digest(bot: Bot, slack: FakeSlack, command: str = "2026-01-28", channel: str = CHANNEL):
    status, _ = await bot.sender.slash(command, channel=channel)
    assert status == 200
    await bot.settle()
    return slack.top_level(channel)[-1]


def spent(fake: FakeOpenAI, since: int = 0) -> tuple[int, int]:
    """(prompt, completion) tokens the endpoint reported since its `since`-th answer."""
    usages = fake.usages[since:]
    return sum(u["prompt_tokens"] for u in usages), sum(u["completion_tokens"] for u in usages)


def analyses_asked(fake: FakeOpenAI, since: int = 0) -> int:
    return sum(1 for r in fake.requests[since:] if '"bullets"' not in r["messages"][0]["content"])


# --- the parent says what it cost --------------------------------------------------------------------


async def test_the_parent_says_what_the_digest_cost_and_a_cached_run_costs_nothing(make_bot, slack, llm):
    bot = await make_bot(llm_price_per_mtok_in=0.15, llm_price_per_mtok_out=0.60)
    parent = shown(await digest(bot, slack))
    tokens_in, tokens_out = spent(llm)
    assert analyses_asked(llm) == 3 and len(llm.requests) == 4  # three analyses and the headline
    line = next(x for x in parent.splitlines() if x.startswith("💰"))
    total, shown_in, shown_out = (int(n.replace(",", "")) for n in COST.match(line).groups())
    assert (shown_in, shown_out, total) == (tokens_in, tokens_out, tokens_in + tokens_out) and total > 0
    money = (tokens_in * 0.15 + tokens_out * 0.60) / 1e6
    assert f"${money:.4f}" in line  # less than a cent: four decimals
    assert "cached" not in line  # nothing was analysed before

    # The same day again: the digest comes from the cache. Nothing is asked, and the line says so.
    asked = len(llm.requests)
    again = shown(await digest(bot, slack))
    assert len(llm.requests) == asked
    line = next(x for x in again.splitlines() if x.startswith("💰"))
    assert line.startswith("💰 0 tokens (0 in / 0 out) · $0.00 · 3 of 3 analyses cached (0 tokens)")
    assert f"{total:,} tokens when it was first built" in line

    # A range over that day: its three analyses are reused (0 tokens), only the day before is new.
    asked, answered = len(llm.requests), len(llm.usages)
    wider = shown(await digest(bot, slack, "2026-01-27..2026-01-28"))
    assert analyses_asked(llm, asked) == 1  # the init commit of the 27th
    tokens_in, tokens_out = spent(llm, answered)  # its analysis and the range's headline
    line = next(x for x in wider.splitlines() if x.startswith("💰"))
    assert line.startswith(f"💰 {tokens_in + tokens_out:,} tokens ({tokens_in:,} in / {tokens_out:,} out)")
    assert "3 of 4 analyses cached (0 tokens)" in line


async def test_the_markdown_report_and_the_report_page_carry_the_cost_line(make_bot, slack, llm, widgets):
    from bot.core.window import day_window
    from bot.render.markdown import render_report
    from bot.report.page import render_page

    bot = await make_bot()
    built = await bot.services.builder.build(
        bot.services.source(str(widgets.path)), day_window(datetime(2026, 1, 28).date(), "Asia/Shanghai"), "en"
    )
    tokens_in, tokens_out = spent(llm)
    line = f"💰 {tokens_in + tokens_out:,} tokens ({tokens_in:,} in / {tokens_out:,} out)"
    assert f"> {line}" in render_report([built])
    assert f'<p class="meta">{line}</p>' in render_page(built)


async def test_a_digest_without_an_llm_shows_no_cost(make_bot, slack, llm):
    bot = await make_bot(openai_base_url=None, openai_api_key=None)
    parent = shown(await digest(bot, slack))
    assert "💰" not in parent and "token" not in parent
    assert llm.requests == []


async def test_the_cost_in_chinese_and_in_the_terminal(make_settings, widgets, llm):
    services = Services.build(
        make_settings(
            default_repo=str(widgets.path),
            default_lang="zh",
            openai_base_url=llm.url,
            openai_api_key="sk-test-cost",
            llm_price_per_mtok_in=2.0,
        ),
        clock=lambda: NOW,
    )
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    try:
        await ConsoleChat(chat.router, platform).handle("/digest 2026-01-28")
        await chat.drain()
        tokens_in, tokens_out = spent(llm)
        assert (
            f"💰 {tokens_in + tokens_out:,} 个 token（输入 {tokens_in:,} / 输出 {tokens_out:,}） · "
            f"${tokens_in * 2.0 / 1e6:.2f}" in out.getvalue()
        )  # a cent or more: two decimals
        await ConsoleChat(chat.router, platform).handle("/digest 2026-01-28")
        await chat.drain()
        assert "💰 0 个 token（输入 0 / 输出 0） · $0.00 · 3 条分析中 3 条来自缓存（0 token）" in out.getvalue()
    finally:
        await services.aclose()


# --- the month's budget -----------------------------------------------------------------------------


async def test_past_the_monthly_budget_digests_go_offline_and_say_so_once(make_bot, slack, llm):
    bot = await make_bot(llm_monthly_token_budget=50_000)
    budget = Budget(bot.services.store, 50_000, lambda: NOW)
    await bot.services.store.incr(budget.key(), 3600, 50_000)  # the month is spent
    parent = await digest(bot, slack)
    assert llm.requests == []  # not one request: not even the headline
    everything = [shown(parent)] + [shown(m) for m in slack.replies(CHANNEL, parent.ts)]
    notice = (
        "⚠️ This month's LLM token budget (50,000 tokens) is spent: the commits not analysed before show "
        "the offline analysis, and the headline is rule-based. The budget resets on 2026-02-01 (UTC)."
    )
    assert sum(text.count(notice) for text in everything) == 1  # said once, in the parent
    assert notice in everything[0]
    assert all("Rule-based analysis" in text for text in everything[1:3])  # the high and the medium commit
    assert "💰 0 tokens (0 in / 0 out)" in everything[0]

    # Nothing of it was kept as if the LLM had written it: in a new month the day's digest stays as
    # published (one digest for one day, with its notice), and another digest of the same commits
    # (a range holding the day) analyses them with the LLM again.
    await bot.services.store.delete(budget.key())
    same = shown(await digest(bot, slack))
    assert analyses_asked(llm) == 0 and notice in same
    again = shown(await digest(bot, slack, "2026-01-27..2026-01-28"))
    assert analyses_asked(llm) == 4 and "budget" not in again  # the day's 3 and the 27th's one


async def test_the_budget_notice_is_in_the_channels_language(make_bot, slack, llm):
    bot = await make_bot(llm_monthly_token_budget=1000)
    await bot.sender.slash("config lang zh")
    await bot.settle()
    budget = Budget(bot.services.store, 1000, lambda: NOW)
    await bot.services.store.incr(budget.key(), 3600, 1000)
    parent = shown(await digest(bot, slack))
    assert llm.requests == []
    assert parent.count("⚠️ 本月的 LLM token 预算（1,000 个 token）已用完") == 1
    assert "预算将于 2026年02月01日（UTC）重置。" in parent


async def test_the_budget_stops_the_llm_midway_through_a_digest(make_bot, slack, llm):
    # One request at a time: the first analysis is answered, and its tokens pass the budget.
    bot = await make_bot(llm_monthly_token_budget=1, llm_concurrency=1, analysis_concurrency=1)
    parent = await digest(bot, slack)
    assert len(llm.requests) == 1
    budget = Budget(bot.services.store, 1, lambda: NOW)
    assert await budget.spent() == sum(spent(llm))  # every answered token counted for the month
    text = shown(parent)
    assert text.count("This month's LLM token budget (1 tokens) is spent") == 1
    replies = [shown(m) for m in slack.replies(CHANNEL, parent.ts)]
    assert sum("Rule-based analysis" in r for r in replies[:2]) == 1  # one of the two shown in full got the LLM


# --- one request's size -----------------------------------------------------------------------------


async def test_a_request_over_request_max_commits_gets_one_sentence_and_no_llm_call(make_bot, slack, llm, widgets):
    bot = await make_bot(request_max_commits=2)
    status, _ = await bot.sender.slash("2026-01-28")
    assert status == 200
    await bot.settle()
    (line,) = [R.unescape(shown_eph(e)) for e in slack.ephemerals]
    assert line.startswith(
        "⚠️ 2026-01-28 has 3 commits in acme/widgets, more than one request may analyse (2) even in its last day alone;"
    )
    assert "Usage: `/digest [DATE|" in line
    assert llm.requests == [] and slack.top_level(CHANNEL) == []  # nothing analysed, nothing posted

    # A range: the sentence names the longest run of its last days that fits.
    bot2 = await make_bot(request_max_commits=3)
    await bot2.sender.slash("2026-01-27..2026-01-28")
    await bot2.settle()
    line = R.unescape(shown_eph(slack.ephemerals[-1]))
    assert (
        "⚠️ 2026-01-27..2026-01-28 has 4 commits in acme/widgets, more than one request may analyse (3); "
        "try a shorter range: `/digest 2026-01-28` (3 commits), or its week's roll-up, the high and medium "
        "commits in one message: `/digest week 2026-01-28`."
    ) in line
    assert llm.requests == [] and slack.top_level(CHANNEL) == []
    await bot2.sender.slash("2026-01-28")  # …which works
    await bot2.settle()
    assert analyses_asked(llm) == 3 and len(slack.top_level(CHANNEL)) == 1


async def test_request_max_commits_counts_after_the_path_filter_and_a_roll_up_over_it_answers(make_bot, slack, llm):
    bot = await make_bot(request_max_commits=2)
    await bot.sender.slash("2026-01-27..2026-01-28 paths src/**")  # 4 listed, 3 touch src/
    await bot.settle()
    line = R.unescape(shown_eph(slack.ephemerals[-1]))
    assert (
        "⚠️ 2026-01-27..2026-01-28 has 3 commits in acme/widgets, more than one request may analyse (2); "
        "try a shorter range: `/digest 2026-01-28 paths src/**` (2 commits), or its week's roll-up"
    ) in line
    assert "`/digest week 2026-01-28 paths src/**`." in line
    assert llm.requests == [] and slack.top_level(CHANNEL) == []

    # ROLLUP_MAX_COMMITS alone bounds a roll-up, with one sentence naming no command it would refuse.
    small = await make_bot(request_max_commits=2, rollup_max_commits=3)
    await small.sender.slash("week 2026-01-28")
    await small.settle()
    line = R.unescape(shown_eph(slack.ephemerals[-1]))
    assert line.startswith(
        "⚠️ 2026-01-26..2026-01-29 has 4 commits in acme/widgets, more than one weekly roll-up may analyse (3);"
    ), line
    assert "ROLLUP_MAX_COMMITS" in line and llm.requests == [] and slack.top_level(CHANNEL) == []

    # Under it, the roll-up of that week (4 commits, over REQUEST_MAX_COMMITS) is built and posted,
    # its building line saying how many commits it analyses.
    await bot.sender.slash("week 2026-01-28")
    await bot.settle()
    building = R.unescape(slack.calls_to("chat.postMessage")[0].params["text"])
    assert "Building the 2026-01-26..2026-01-29 weekly roll-up for acme/widgets: 4 commits to analyse" in building
    (parent,) = slack.top_level(CHANNEL)
    assert "acme/widgets" in shown(parent) and analyses_asked(llm) == 4
    # …and what it analysed is free for the next request: 4 commits listed, none to analyse
    await bot.sender.slash("2026-01-27..2026-01-28")
    await bot.settle()
    assert analyses_asked(llm) == 4 and len(slack.top_level(CHANNEL)) == 2


async def test_request_max_commits_in_chinese_names_the_repository_it_was_given(make_bot, slack, llm, widgets):
    bot = await make_bot(request_max_commits=3, default_lang="zh")
    await bot.sender.slash(f"2026-01-27..2026-01-28 {widgets.path}")
    await bot.settle()
    line = R.unescape(shown_eph(slack.ephemerals[-1]))
    assert (
        f"⚠️ acme/widgets 在 2026-01-27..2026-01-28 有 4 个提交，超过单次请求可分析的上限（3）；请缩小范围："
        f"`/digest 2026-01-28 {widgets.path}`（3 个提交），或看这一周的周报（重要和中等的提交合成一条消息）："
        f"`/digest 周报 2026-01-28 {widgets.path}`。"
    ) in line
    assert "用法：" in line and llm.requests == []


# --- /metrics ---------------------------------------------------------------------------------------


def sample(page: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", page, re.M)
    return float(match.group(1)) if match else 0.0


async def test_metrics_show_tokens_per_direction_per_digest_and_per_month(make_bot, slack, llm):
    bot = await make_bot()
    budget = Budget(bot.services.store, None, lambda: NOW)
    ops = await start_server(build_ops_app(lambda: _healthy(), refresh=budget.refresh_gauge), "127.0.0.1", 0)
    url = f"http://127.0.0.1:{bound_port(ops)}/metrics"
    try:
        async with aiohttp.ClientSession() as http:

            async def page() -> str:
                async with http.get(url) as resp:
                    assert resp.status == 200
                    return await resp.text()

            before = await page()
            await digest(bot, slack)
            after = await page()
        tokens_in, tokens_out = spent(llm)
        grew = lambda name: sample(after, name) - sample(before, name)  # noqa: E731
        assert grew('digestbot_llm_tokens_total{direction="in"}') == tokens_in
        assert grew('digestbot_llm_tokens_total{direction="out"}') == tokens_out
        assert grew("digestbot_digest_tokens_count") == 1
        assert grew("digestbot_digest_tokens_sum") == tokens_in + tokens_out
        # the month's total as Redis holds it (every process's requests), read at the scrape
        assert sample(after, "digestbot_llm_tokens_month") == tokens_in + tokens_out == await budget.spent()
    finally:
        await ops.cleanup()


async def _healthy() -> dict[str, str]:
    return {"redis": "up"}


def test_metric_names_are_declared():
    assert {"llm_tokens", "digest_tokens", "llm_tokens_month"} <= set(metrics.METRICS)


# --- the month's count ------------------------------------------------------------------------------


async def test_answers_arriving_together_are_counted_before_each_returns_in_fewer_round_trips(store):
    """A digest's answers arrive together: each one's tokens are in the month's count when its
    spend returns (the budget check that follows counts them), every token once, and added with
    fewer INCRBYs than answers (Redis's own command statistics)."""
    budget = Budget(store, 10**9, lambda: NOW)
    returned = 0
    short: list[tuple[int, int]] = []

    async def answer(tokens: int) -> None:
        nonlocal returned
        await budget.spend(tokens)
        returned += tokens
        owed = returned
        if (there := await budget.spent()) < owed:
            short.append((there, owed))

    await store.r.config_resetstat()
    await asyncio.gather(*(answer(100 + i) for i in range(40)))
    incrbys = (await store.r.info("commandstats"))["cmdstat_incrby"]["calls"]
    assert short == []
    assert await budget.spent() == sum(100 + i for i in range(40))
    assert incrbys < 40

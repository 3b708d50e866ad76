"""One digest for one day (issue 25, item 5). A finished day's digest is kept as first published:
every later reader — the CLI's JSON then its Markdown, another channel, the report page — gets
the same levels and types, fallbacks included. The improve pass (the clock's, off the readers'
path) retries the fallbacks; a success improves the kept digest in place, with a note, and edits
each posted message once. Real processes, real Redis, the real SDKs against the fake Slack,
Feishu and LLM servers; what is asserted is what readers see."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.chat_platform import Platforms
from bot.core.store import StoreUnavailable, open_store
from bot.core.window import day_window
from bot.improve.runner import Improver
from bot.render.jsonout import render_json
from bot.runtime.app import App
from bot.runtime.services import Services
from tests.shared.feishu import feishu_env, rocket_repo
from tests.shared.slack import (
    CHANNEL,
    HIGH_TITLE,
    by_title,
    digest_thread,
    shown,
)


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


WINDOW = day_window(date(2026, 1, 28), "Asia/Shanghai")
LATER = datetime.now(UTC) + timedelta(hours=1)  # past every pass's due time (DIGEST_IMPROVE_MINUTES)
NOTE = re.compile(
    r"✏️ Re-analysed by the LLM at \d\d-\d\d \d\d:\d\d \(it was the offline fallback: "
    r"the LLM endpoint answered with errors\)"
)


def entries(digest_json: str) -> dict[str, dict]:
    return {e["commit"]["title"]: e for e in json.loads(digest_json)["digests"][0]["entries"]}


def test_one_day_through_the_cli_is_one_digest_in_json_and_markdown_until_improved(
    run, widgets, flaky_llm, make_settings
):
    # the LLM fails this commit now; once healed it says medium / removal (the rules: high / feature)
    flaky_llm.fail(HIGH_TITLE, importance="medium", change_type="removal/deprecation")
    env = {"OPENAI_BASE_URL": flaky_llm.url, "OPENAI_API_KEY": "sk-test-flaky-000", "LLM_MAX_RETRIES": "0"}
    args = ("digest", "--repo", str(widgets.path), "--date", "2026-01-28", "--lang", "en")
    first = run(*args, "--format", "json", env=env)
    assert first.returncode == 0, first.stderr
    shown_first = entries(first.stdout)[HIGH_TITLE]
    assert (shown_first["importance"], shown_first["analysis"]["change_type"]) == ("high", "feature")
    assert shown_first["analysis"]["origin"] == "fallback"

    flaky_llm.heal()  # the next request would now succeed: it must not change the day's digest
    second = run(*args, "--format", "markdown", env=env)
    assert second.returncode == 0, second.stderr
    section = second.stdout.split("#### feat\\!: remove the legacy export API", 1)[1].split("---", 1)[0]
    assert "**🎯 Change type**: Feature · **⚡ Importance**: 🔴 High" in section
    assert "The LLM analysis failed" in section and "Re-analysed" not in section
    assert flaky_llm.analyses_of(HIGH_TITLE) == 1  # the Markdown run asked nothing

    # the clock's improve pass (another process, same Redis) retries it once; the day changes in place
    async def improve():
        services = Services.build(make_settings(redis_prefix=run.prefix, **flaky_llm.settings()))
        try:
            return await App.build(services).improver.tick(LATER)
        finally:
            await services.aclose()

    import asyncio

    ((_, outcome),) = asyncio.run(improve())
    assert outcome == "1 of 1 improved"
    third = run(*args, "--format", "json", env=env)
    improved = entries(third.stdout)[HIGH_TITLE]
    assert (improved["importance"], improved["analysis"]["change_type"]) == ("medium", "removal/deprecation")
    assert improved["analysis"]["origin"] == "llm" and improved["analysis"]["improved_from"] == "http_error"
    assert (
        json.loads(third.stdout)["digests"][0]["notices"] == []
        and json.loads(third.stdout)["digests"][0]["revision"] == 1
    )
    md = run(*args, "--format", "markdown", env=env).stdout
    assert NOTE.search(md) and "🟡 Medium" in md.split("feat\\!: remove the legacy export API", 2)[2][:1500]


async def test_posted_slack_digests_are_edited_once_with_the_note(make_bot, slack, widgets, flaky_llm):
    flaky_llm.fail(HIGH_TITLE, importance="medium", change_type="removal/deprecation")
    bot = await make_bot(**flaky_llm.settings())
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    assert shown(high).startswith("🔴") and "The LLM analysis failed" in shown(high)
    assert "⚠️ The LLM could not analyse 1 of 3 commits" in shown(parent)
    asked = flaky_llm.analyses_of(HIGH_TITLE)

    # the LLM is back; a second reader asks for the day (here, the same channel again): the same
    # digest as published, not a retry on their request
    flaky_llm.heal()
    parent2, replies2 = await digest_thread(bot, slack)
    assert shown(by_title(replies2, HIGH_TITLE)).startswith("🔴") and flaky_llm.analyses_of(HIGH_TITLE) == asked
    threads = [(parent, replies), (parent2, replies2)]
    before = {m.ts: slack.message(CHANNEL, m.ts).edits for p, rs in threads for m in (p, *rs)}

    # the clock's improve pass: one retry, then each posted message that shows it edited once
    ((_, outcome),) = await bot.chat.improver.tick(LATER)
    assert outcome == "1 of 1 improved" and flaky_llm.analyses_of(HIGH_TITLE) == asked + 1
    for p, rs in threads:
        now_parent = slack.message(CHANNEL, p.ts)
        assert now_parent.edits == before[p.ts] + 1
        assert "3 commits on 2026-01-28 | 🔴 high 0 | 🟡 medium 3 | 🟢 low 0" in shown(now_parent)
        assert "could not analyse" not in shown(now_parent)
        detail = slack.message(CHANNEL, by_title(rs, HIGH_TITLE).ts)
        assert detail.edits == 1 and shown(detail).startswith("🟡")
        assert NOTE.search(shown(detail)) and "Removal / deprecation" in shown(detail)
        for other in rs:
            if other.ts != detail.ts:
                assert slack.message(CHANNEL, other.ts).edits == 0  # shows nothing that changed
    assert slack.block_errors == []

    # nothing more to do: later ticks edit nothing, the JSON shows the improved entry with its note
    assert await bot.chat.improver.tick(LATER + timedelta(days=1)) == []
    assert sum(slack.message(CHANNEL, ts).edits for ts in before) == sum(before.values()) + 4
    digest = await bot.services.builder.build(bot.services.source(str(widgets.path)), WINDOW, "en")
    entry = entries(render_json([digest]))[HIGH_TITLE]
    assert entry["importance"] == "medium" and entry["analysis"]["improved_from"] == "http_error"
    assert entry["analysis"]["improved_at"].startswith(LATER.astimezone(WINDOW.start.tzinfo).date().isoformat())


async def test_many_channels_one_improvement_each_message_edited_once(make_bot, slack, widgets, flaky_llm):
    """Three channels post the same day; two processes run the improve pass at once."""
    flaky_llm.fail(HIGH_TITLE, importance="medium", change_type="removal/deprecation")
    bot = await make_bot(**flaky_llm.settings())
    other = await make_bot(**flaky_llm.settings())  # a second process on the same Redis
    details = []
    for channel in ("C0001", "C0002", "C0003"):
        status, _ = await bot.sender.slash("2026-01-28", channel=channel)
        assert status == 200
        await bot.settle()
        (parent,) = slack.top_level(channel)
        details.append((channel, by_title(slack.replies(channel, parent.ts), HIGH_TITLE)))
    flaky_llm.heal()
    asked = flaky_llm.analyses_of(HIGH_TITLE)
    import asyncio

    outcomes = await asyncio.gather(bot.chat.improver.tick(LATER), other.chat.improver.tick(LATER))
    assert sorted(o for done in outcomes for _, o in done) in (
        ["1 of 1 improved", "busy"],
        ["1 of 1 improved", "no retries"],
        ["1 of 1 improved"],
    )
    assert flaky_llm.analyses_of(HIGH_TITLE) == asked + 1  # one retry for every channel
    for channel, detail in details:
        now = slack.message(channel, detail.ts)
        assert now.edits == 1 and NOTE.search(shown(now))


async def test_the_feishu_card_is_patched_once_with_the_note(make_settings, repo, flaky_llm):
    title = "feat: add export --since flag"  # the rules: medium, a card of its own
    flaky_llm.fail(title, importance="high", change_type="feature")
    async with feishu_env(make_settings, repo, **flaky_llm.settings()) as env:
        parent, replies = await env.digest()
        (card,) = [m for m in replies if "LLM 分析失败" in env.fake.markdown_of(m)]
        assert "add export" in env.fake.card(card)["header"]["title"]["content"]
        assert not card.patches
        flaky_llm.heal()
        ((_, outcome),) = await env.chat.improver.tick(LATER)
        assert outcome == "1 of 1 improved"
        assert len(card.patches) == 1
        shown_now = env.fake.markdown_of(card)
        assert re.search(r"✏️ 已于 \d\d-\d\d \d\d:\d\d 由 LLM 重新分析（原为离线兜底分析：LLM 服务返回错误）", shown_now)
        assert "LLM 分析失败" not in shown_now and "🔴" in env.fake.card(card)["header"]["title"]["content"]
        assert "LLM 未能分析" not in env.fake.markdown_of(parent)
        assert await env.chat.improver.tick(LATER + timedelta(days=1)) == [] and len(card.patches) == 1


class StoreFailingOnce:
    """A store whose first compare-and-set of a kept digest fails as if Redis went away right after
    the retry's analysis was cached (the pass dies there)."""

    @staticmethod
    def build(settings):
        store = open_store(settings)
        real = store.set_json_if
        failed = []

        async def set_json_if(*args, **kwargs):
            if not failed:
                failed.append(True)
                raise StoreUnavailable("Redis went away")
            return await real(*args, **kwargs)

        store.set_json_if = set_json_if  # our own Store's method, not an SDK's
        return store


async def test_a_pass_killed_after_the_analysis_leaves_the_digest_consistent_and_loses_nothing(
    make_settings, widgets, flaky_llm
):
    flaky_llm.fail(HIGH_TITLE, importance="medium", change_type="removal/deprecation")
    settings = make_settings(**flaky_llm.settings())
    services = Services.build(settings, store=StoreFailingOnce.build(settings))
    try:
        source = services.source(str(widgets.path))
        published = await services.builder.build(source, WINDOW, "en")
        flaky_llm.heal()
        asked = flaky_llm.analyses_of(HIGH_TITLE)
        improver = Improver(
            services.store,
            services.settings,
            Platforms(),
            lambda: LATER,
            services.sources,
            services.builder,
            services.corrections,
        )
        try:
            await improver.run(published.kept_as, LATER)
            raise AssertionError("the pass should have died at its compare-and-set")
        except StoreUnavailable:
            pass
        # consistent: every reader still gets the digest as published, its notice in place
        still = await services.builder.build(source, WINDOW, "en")
        assert still.revision == 0 and still.notices == published.notices
        assert entries(render_json([still]))[HIGH_TITLE]["analysis"]["origin"] == "fallback"
        # the next pass (due again after the interval) finishes it without asking the LLM again
        assert await improver.tick(LATER) == []  # not yet due
        ((_, outcome),) = await improver.tick(LATER + timedelta(minutes=settings.digest_improve_minutes))
        assert outcome == "1 of 1 improved" and flaky_llm.analyses_of(HIGH_TITLE) == asked + 1
        better = await services.builder.build(source, WINDOW, "en")
        assert better.revision == 1 and better.notices == ()
        assert NOTE.search(render_report_of(better))
    finally:
        await services.aclose()


def render_report_of(digest) -> str:
    from bot.render.markdown import render_report

    return render_report([digest])

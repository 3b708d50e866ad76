"""A level correction redraws everything derived from it, in Slack, Feishu and the terminal: the
corrected commit's reason fits its new level (and keeps what the bot had said), the counts, the
headline and its main-risks line follow the corrected levels, in the message redrawn in place and
in every digest, roll-up and report drawn afterwards; a second correction of the same commit
replaces the first. Driven as people drive it (signed Slack block actions, Feishu card
callbacks, lines typed in the terminal), asserted on what they see."""

from __future__ import annotations

from itertools import takewhile

import pytest

from tests.shared.feishu import GROUP, buttons, feishu_env, rocket_repo
from tests.shared.slack import CHANNEL, HIGH_TITLE, MEDIUM_TITLE, by_title, digest_thread, shown, shown_eph
from tests.test_levels_feishu import level_value
from tests.test_levels_feishu import tap as tap_feishu
from tests.test_levels_slack import ANA, now, tap

BREAKING = "The commit declares a breaking change; callers may need changes after upgrading"
BREAKING_RISK = "existing callers may fail after upgrading"


def headline(text: str) -> list[str]:
    """The headline's bullets of a digest message, as read."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Headlines" in line or "要点" in line)
    bullets = []
    for line in lines[start + 1 :]:
        if not line.lstrip().startswith("•"):
            break
        bullets.append(line.lstrip()[1:].strip())
    return bullets


async def test_slack_a_high_corrected_twice_leaves_the_headline_and_its_risks(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    first = headline(shown(parent))
    assert first[0] == f"{HIGH_TITLE}: {BREAKING}" and BREAKING_RISK in first[-1]
    high = by_title(replies, HIGH_TITLE)

    await tap(bot, slack, high, "too_high")  # high → medium
    was_high = f"Corrected to medium by a reader; the bot had said high: {BREAKING}"
    assert f"*⚡ Importance*: 🟡 Medium — {was_high}" in shown(now(slack, high))
    bullets = headline(shown(now(slack, parent)))
    assert f"{HIGH_TITLE}: {was_high}" in bullets and f"{HIGH_TITLE}: {BREAKING}" not in bullets
    assert "🔴 high 0 | 🟡 medium 2 | 🟢 low 1" in shown(now(slack, parent))

    await tap(bot, slack, now(slack, high), "too_high")  # medium → low: the first correction replaced
    detail = shown(now(slack, high))
    assert f"*⚡ Importance*: 🟢 Low — Corrected to low by a reader; the bot had said high: {BREAKING}" in detail
    assert "medium" not in detail.split("Importance*")[1].splitlines()[0]
    redrawn = shown(now(slack, parent))
    assert "🔴 high 0 | 🟡 medium 1 | 🟢 low 2" in redrawn
    bullets = headline(redrawn)
    assert not any(HIGH_TITLE in b for b in bullets)  # no longer leads (nor appears)
    assert bullets[0].startswith(MEDIUM_TITLE)
    # the main risks are those of the commits still above low (whatever the rules find in them):
    # never the corrected commit's
    assert not any(BREAKING_RISK in b for b in bullets)

    # every digest drawn afterwards: the day again, and the week's roll-up
    parent2, _ = await digest_thread(bot, slack)
    assert headline(shown(parent2)) == bullets
    status, _ = await bot.sender.slash("week 2026-01-28")
    assert status == 200
    await bot.settle()
    week = shown(slack.top_level(CHANNEL)[-1])
    # the week also holds the repository's first commit (whatever the rules make of it): the
    # corrected one is counted low, none is high
    assert week.startswith("Weekly roll-up") and "4 commits in 2026-01-26..2026-02-01 | 🔴 high 0 |" in week
    # the corrected commit is low there too: counted, not listed, not in the headline
    assert bullets[0] in headline(week) and HIGH_TITLE not in week


def feishu_headline(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if "📌 要点" in line)
    return [line[2:] for line in takewhile(lambda x: x.startswith("- "), lines[start + 1 :])]


async def test_feishu_the_headline_and_reasons_follow_each_correction_in_chinese(make_settings, tmp_path):
    async with feishu_env(make_settings, rocket_repo(tmp_path)) as env:
        parent, (detail, low) = await env.digest()
        before = feishu_headline(env.fake.markdown_of(parent))
        assert len(before) == 2 and before[0].startswith("feat: add export --since flag")
        assert before[1].startswith("主要风险：") and "src/export.py" in before[1]

        await tap_feishu(env, detail, level_value(env.fake.card(detail), "", "too_high"))  # medium → low
        assert "**⚡ 重要程度**：🟢 低 — 读者已纠正为低；机器人原先判为中：新功能" in env.fake.markdown_of(detail)
        assert feishu_headline(env.fake.markdown_of(parent)) == ["3 个提交，均为低重要性：文档、Bug 修复、新功能。"]

        # a low commit raised twice: the second correction replaces the first, from the bot's own level
        card = env.fake.card(low)
        fix = next(
            v["sha"]
            for v in (b["behaviors"][0].get("value", {}) for b in buttons(card))
            if v.get("action") == "level" and v["dir"] == "too_low"
        )
        title = "docs: fix a typo"
        await tap_feishu(env, low, level_value(card, fix[:12], "too_low"))  # low → medium
        assert feishu_headline(env.fake.markdown_of(parent))[0].startswith(
            f"{title}：读者已纠正为中；机器人原先判为低："
        )
        await tap_feishu(env, low, level_value(env.fake.card(low), fix[:12], "too_low"))  # medium → high
        after = feishu_headline(env.fake.markdown_of(parent))
        assert after[0].startswith(f"{title}：读者已纠正为高；机器人原先判为低：")
        assert "🔴 高 1 | 🟡 中 0 | 🟢 低 2" in env.fake.markdown_of(parent)

        # the next digest of that day is drawn with the same headline
        await env.say("digest 2026-01-28")
        await env.settle()
        assert feishu_headline(env.fake.markdown_of(env.fake.top_level(GROUP)[-1])) == after


async def test_console_chinese_words_and_what_two_corrections_redraw(console_in):
    console = await console_in("zh")
    shown = await console("/digest 2026-01-28")
    title, reason = "[Deprecation] Remove the legacy exporter (#41)", "移除了 1 个公开源码文件中的公开 API（−400 行）"
    assert f"  • {title}：{reason}" in shown and "  • 主要风险：删除了 src/legacy_export.py" in shown

    said = await console("level 2 太高")  # high → medium, in the channel's own words
    assert "今后将显示为 🟡 中。" in said
    assert f"⚡ 重要程度: 🟡 中 — 读者已纠正为中；机器人原先判为高：{reason}" in said
    assert f"  • {title}：读者已纠正为中；机器人原先判为高：{reason}" in said  # the redrawn headline
    assert "🔴 高 0 | 🟡 中 1 | 🟢 低 2" in said

    said = await console("等级 2 偏高")  # medium → low: replaces the first correction
    assert f"⚡ 重要程度: 🟢 低 — 读者已纠正为低；机器人原先判为高：{reason}" in said
    parent = said[said.index("[#1] （已更新）") :]
    assert "🔴 高 0 | 🟡 中 0 | 🟢 低 3" in parent
    assert "  • 3 个提交，均为低重要性：Bug 修复、文档、移除 / 弃用。" in parent
    assert title not in parent and "主要风险" not in parent

    again = await console("/digest 2026-01-28")  # drawn afterwards: the same
    assert "  • 3 个提交，均为低重要性：Bug 修复、文档、移除 / 弃用。" in again and "主要风险" not in again

    assert "用法：level N 太高|太低 [sha]（也可写 too-high|too-low" in await console("level 2 sideways")
    assert "• level N 太高|太低 [sha] — 指出第 N 条消息里某个提交的重要度评得太高或太低" in await console("help")
    assert "例如 level 3 太低 " in await console("level 3 太低")  # #3 lists two commits


async def test_slack_a_correction_typed_in_the_digest_s_thread(make_bot, slack, widgets):
    bot = await make_bot()
    await bot.sender.slash("config lang zh")
    await bot.settle()
    parent, _replies = await digest_thread(bot, slack)
    assert f"• {HIGH_TITLE}：" in shown(parent)
    sha = widgets.shas["high"][:9]

    await bot.sender.event(
        bot.sender.message_event(f"<@UBOT> level {sha} 太高", kind="app_mention", thread_ts=parent.ts, user=ANA)
    )
    await bot.settle()
    assert "今后将显示为 🟡 中" in shown_eph(slack.ephemerals[-1]) and slack.ephemerals[-1]["user"] == ANA
    redrawn = shown(now(slack, parent))
    assert "🔴 高 0 | 🟡 中 2 | 🟢 低 1" in redrawn and "读者已纠正为中；机器人原先判为高" in redrawn

    await bot.sender.event(
        bot.sender.message_event("<@UBOT> 等级 太低", kind="app_mention", thread_ts=parent.ts, user=ANA)
    )
    await bot.settle()
    assert shown_eph(slack.ephemerals[-1]).startswith("这份日报列出了多个提交：请指明一个，例如 level ")
    before = len(slack.ephemerals)
    await bot.sender.event(  # a question that starts with the word is a question
        bot.sender.message_event("<@UBOT> level of risk here?", kind="app_mention", thread_ts=parent.ts, user=ANA)
    )
    await bot.settle()
    assert not any("level SHA" in shown_eph(e) for e in slack.ephemerals[before:])
    assert (await bot.sender.slash("level 太高"))[0] == 200  # not in a thread: how it is typed
    await bot.settle()
    assert shown_eph(slack.ephemerals[-1]).startswith("用法：level SHA 太高|太低")
    await bot.sender.slash("help")
    await bot.settle()
    assert "• `level SHA 太高|太低`（或 too-high|too-low，在日报的话题里）" in shown_eph(slack.ephemerals[-1])


async def test_feishu_a_correction_typed_in_the_digest_s_topic(make_settings, tmp_path):
    async with feishu_env(make_settings, rocket_repo(tmp_path)) as env:
        parent, (detail, _low) = await env.digest()
        sha = level_value(env.fake.card(detail), "", "too_high")["sha"]

        async def typed(line: str) -> str:
            """What the bot answers in the topic (its private answers to a topic go there)."""
            before = len(env.fake.thread(parent.message_id))
            await env.say(line, root_id=parent.message_id)
            await env.settle()
            (answer,) = env.fake.thread(parent.message_id)[before:]
            return env.fake.markdown_of(answer)

        assert (await typed(f"等级 {sha[:8]} 偏高")).endswith("今后将显示为 🟢 低。")
        assert feishu_headline(env.fake.markdown_of(parent)) == ["3 个提交，均为低重要性：文档、Bug 修复、新功能。"]
        assert "🟡 中 0 | 🟢 低 3" in env.fake.markdown_of(parent)
        assert (await typed(f"level {sha[:8]} sideways")).startswith("用法：level SHA 太高|太低")


@pytest.fixture
def repo(tmp_path):
    from tests.shared.console import console_repo

    return console_repo(tmp_path)

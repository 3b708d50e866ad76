"""A channel reads the bot in its own language: bad input in a Chinese channel (the default) is
answered in Chinese — no English sentence outside the usage syntax and the user's own words —
and the same input in an English channel in English. Through Slack end to end: signed slash
commands into the real endpoint, the real SDK posting to the fake Slack. Chinese date words
(`/digest 昨天`, `2026年1月28日` …) are digests, not unknown commands."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.render import slack as R
from tests.shared.slack import CHANNEL, HIGH_TITLE, shown_eph

# Two English words in a row: a sentence (option names listed with commas are syntax, not prose).
ENGLISH = re.compile(r"[A-Za-z][A-Za-z']+ +[A-Za-z][A-Za-z']+")

# The bad inputs of the issue: a date that does not exist, a subscribe without its repository, a
# language that is not offered, a word that is no command (Chinese and English), a time zone,
# a time and a minimum level that do not exist, a range over the limit; plus a few more.
BAD = [
    # (typed, the English sentence, a piece of the Chinese one)
    ("2026-13-45", "'2026-13-45' is not a real calendar date.", "“2026-13-45”不是真实存在的日期。"),
    ("subscribe", "Name the repository to subscribe to.", "请写出要订阅的仓库。"),
    ("config lang fr", "lang must be zh or en, not 'fr'.", "lang 只能是 zh 或 en，不能是“fr”。"),
    ("明天", "Unknown command '明天'.", "未知命令“明天”。"),
    ("frobnicate", "Unknown command 'frobnicate'.", "未知命令“frobnicate”。"),
    ("subscribe acme/widgets tz Mars/Base", "Unknown time zone 'Mars/Base'", "未知时区“Mars/Base”"),
    ("subscribe acme/widgets at 25:00", "'at' must be a time like 09:30, not '25:00'.", "at 需要 09:30 这样的时间"),
    (
        "subscribe acme/widgets min urgent",
        "min must be high or medium or low, not 'urgent'.",
        "min 只能是 high 或 medium 或 low，不能是“urgent”。",
    ),
    (
        "2025-01-01..2026-01-01",
        "The range 2025-01-01..2026-01-01 spans 366 days; the limit is 31.",
        "范围 2025-01-01..2026-01-01 共 366 天，超过上限 31 天。",
    ),
    ("2999-01-01", "2999-01-01 is in the future", "2999-01-01 还没到"),
    ("subscribe acme/widgets colour blue", "Unknown option 'colour'", "未知选项“colour”"),
    ("ask af9b69f", "Ask a question: about a period", "请提一个问题：关于一段时间"),
    ("digest /etc", "In chat you can name GitHub repositories", "在聊天里只能查询 GitHub 仓库"),
]


def without_syntax_and_words(reply: str, typed: str) -> str:
    """The reply minus what may stay as it is: usage lines (command syntax), the user's words."""
    kept = [line for line in reply.splitlines() if not line.startswith(("用法：", "Usage:", "• `"))]
    rest = "\n".join(kept)
    for word in sorted(typed.split(), key=len, reverse=True):
        rest = rest.replace(word, "")
    return rest


async def private_reply(bot, slack, typed: str) -> str:
    before = len(slack.ephemerals)
    status, _ = await bot.sender.slash(typed)
    assert status == 200
    await bot.settle()
    new = slack.ephemerals[before:]
    assert len(new) == 1, (typed, new)
    return R.unescape(shown_eph(new[0]))


async def test_a_chinese_channel_reads_every_bad_input_in_chinese(make_bot, slack):
    bot = await make_bot(default_lang="zh")  # the default language of a channel nobody configured
    for typed, _, chinese in BAD:
        reply = await private_reply(bot, slack, typed)
        assert reply.startswith("⚠️") and chinese in reply, (typed, reply)
        english = ENGLISH.findall(without_syntax_and_words(reply, typed))
        assert english == [], (typed, reply)
    assert slack.top_level(CHANNEL) == []


async def test_an_english_channel_reads_them_in_english(make_bot, slack):
    bot = await make_bot(default_lang="en")
    for typed, english, _ in BAD:
        reply = await private_reply(bot, slack, typed)
        assert reply.startswith("⚠️") and english in reply, (typed, reply)
        assert not re.search(r"[\u4e00-\u9fff]", reply.replace(typed, "")), (typed, reply)


async def test_a_channel_switched_to_english_is_answered_in_english(make_bot, slack):
    bot = await make_bot(default_lang="zh")
    await bot.sender.slash("config lang en")
    await bot.settle()
    assert "'2026-13-45' is not a real calendar date." in await private_reply(bot, slack, "2026-13-45")


@pytest.mark.parametrize("typed", ["2026年1月28日", "digest 2026年1月28日", "2026年1月27日至2026-01-28"])
async def test_chinese_dates_are_digests_in_any_channel(make_bot, slack, typed):
    bot = await make_bot(default_lang="en")
    status, _ = await bot.sender.slash(typed)
    assert status == 200
    await bot.settle()
    (parent,) = slack.top_level(CHANNEL)
    assert "acme/widgets" in R.unescape(parent.text) and "2026-01-28" in R.unescape(parent.text)
    assert HIGH_TITLE in slack.all_text()
    assert slack.ephemerals == []


@pytest.mark.parametrize("word,days", [("昨天", 1), ("前天", 2), ("今天", 0)])
async def test_yesterday_in_chinese_is_the_channels_yesterday(make_bot, slack, word, days):
    bot = await make_bot(default_lang="zh", default_tz="Asia/Shanghai")
    status, _ = await bot.sender.slash(word)
    assert status == 200
    await bot.settle()
    day = (datetime.now(ZoneInfo("Asia/Shanghai")) - timedelta(days=days)).date().isoformat()
    (line,) = slack.top_level(CHANNEL)  # the widgets have no commits then: one line says so
    suggestion = "可以试试 `/digest 上周`，看上周全部的提交。"  # asked for, so a hint follows
    assert R.unescape(line.text) == f"acme/widgets 在 {day}（Asia/Shanghai）没有新的提交。{suggestion}"
    assert slack.ephemerals == []


async def test_last_week_is_a_range_of_seven_days(make_bot, slack):
    bot = await make_bot(default_lang="zh", default_tz="Asia/Shanghai")
    await bot.sender.slash("上周")
    await bot.settle()
    today = datetime.now(ZoneInfo("Asia/Shanghai")).date()
    monday = today - timedelta(days=today.weekday() + 7)
    (line,) = slack.top_level(CHANNEL)
    assert f"{monday.isoformat()}..{(monday + timedelta(days=6)).isoformat()}" in R.unescape(line.text)

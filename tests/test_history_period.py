"""The period a history question names, read from its words (pure: `now` is passed in)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.models import UsageError
from bot.i18n import localize
from bot.period_questions.period import find_period, period_from_flags

# Wednesday 2026-01-28, 10:00 in Shanghai.
NOW = datetime(2026, 1, 28, 2, 0, tzinfo=UTC)
TZ = "Asia/Shanghai"


@pytest.mark.parametrize(
    "question,label,rest",
    [
        ("what changed in the scheduler this week?", "2026-01-26..2026-01-28", "what changed in the scheduler ?"),
        ("what landed last week in the resolver", "2026-01-19..2026-01-25", "what landed in the resolver"),
        ("any FP8 work since Monday?", "2026-01-26..2026-01-28", "any FP8 work ?"),
        ("any FP8 work since last friday?", "2026-01-23..2026-01-28", "any FP8 work ?"),
        ("cache fixes in the last 3 days", "2026-01-26..2026-01-28", "cache fixes"),
        ("cache fixes over the past two weeks", "2026-01-15..2026-01-28", "cache fixes"),
        ("what broke yesterday", "2026-01-27", "what broke"),
        ("what changed on 2026-01-20?", "2026-01-20", "what changed ?"),
        ("what changed 2026-01-19..2026-01-21 in docs", "2026-01-19..2026-01-21", "what changed in docs"),
        ("between 2026-01-05 and 2026-01-09, what about ROCm?", "2026-01-05..2026-01-09", ", what about ROCm?"),
        ("since 2026-01-20 anything on auth?", "2026-01-20..2026-01-28", "anything on auth?"),
        ("上周 FP8 在 ROCm 上有什么改动？", "2026-01-19..2026-01-25", "FP8 在 ROCm 上有什么改动？"),
        ("本周调度器有什么修复", "2026-01-26..2026-01-28", "调度器有什么修复"),
        ("最近三天的缓存改动", "2026-01-26..2026-01-28", "的缓存改动"),
        ("过去两周的性能优化", "2026-01-15..2026-01-28", "的性能优化"),
        ("自周一以来有哪些安全修复？", "2026-01-26..2026-01-28", "有哪些安全修复？"),
        ("1月20日至1月22日 解析器的改动", "2026-01-20..2026-01-22", "解析器的改动"),
        ("2026年1月21日 发布了什么", "2026-01-21", "发布了什么"),
        ("this month's releases", "2026-01-01..2026-01-28", "'s releases"),
    ],
)
def test_the_period_is_read_from_the_words_and_taken_out(question, label, rest):
    period = find_period(question, TZ, NOW, 31)
    assert period.said
    assert period.window.label == label
    assert period.question == rest


def test_no_period_words_mean_the_last_seven_days_in_the_zone():
    period = find_period("what changed in the scheduler?", TZ, NOW, 31)
    assert not period.said and period.window.label == "2026-01-22..2026-01-28"
    assert period.window.start.isoformat() == "2026-01-22T00:00:00+08:00"
    assert period.window.end.isoformat() == "2026-01-29T00:00:00+08:00"
    assert period.question == "what changed in the scheduler?"


def test_the_day_boundary_is_the_zones():
    # 2026-01-28 02:00 UTC is still the 27th in New York: "yesterday" is the 26th there.
    assert find_period("yesterday", "America/New_York", NOW, 31).window.label == "2026-01-26"


@pytest.mark.parametrize(
    "question,english,chinese",
    [
        (
            "what changed in the last 40 days",
            "spans 40 days; the limit is 31 (MAX_RANGE_DAYS)",
            "共 40 天，超过上限 31 天",
        ),
        ("from 2026-01-25 to 2026-01-20", "ends (2026-01-20) before it starts (2026-01-25)", "早于开始日"),
        ("since 2026-02-10?", "2026-02-10 is in the future", "还没到"),
        ("on 2026-02-30", "'2026-02-30' is not a real calendar date", "不是一个真实存在的日期"),
    ],
)
def test_bad_periods_are_one_sentence_in_the_readers_language(question, english, chinese):
    with pytest.raises(UsageError) as err:
        find_period(question, TZ, NOW, 31)
    assert english in localize(err.value, "en")
    assert chinese in localize(err.value, "zh")


def test_flags_give_the_period_and_default_to_seven_days_ending_at_until():
    assert period_from_flags("2026-01-19", "2026-01-25", TZ, NOW, 31).label == "2026-01-19..2026-01-25"
    assert period_from_flags("2026-01-19", None, TZ, NOW, 31).label == "2026-01-19..2026-01-28"
    assert period_from_flags(None, "2026-01-10", TZ, NOW, 31).label == "2026-01-04..2026-01-10"
    assert period_from_flags("昨天", None, TZ, NOW, 31).label == "2026-01-27..2026-01-28"
    with pytest.raises(UsageError, match="before it starts"):
        period_from_flags("2026-01-25", "2026-01-19", TZ, NOW, 31)
    with pytest.raises(UsageError, match="spans 60 days"):
        period_from_flags("2025-11-30", "2026-01-28", TZ, NOW, 31)


@pytest.mark.parametrize(
    "text,repo,rest",
    [
        (
            "what changed in the resolver since Monday in astral-sh/uv?",
            "astral-sh/uv",
            "what changed in the resolver since Monday ?",
        ),
        ("在 astral-sh/uv 上周有什么改动", "astral-sh/uv", "上周有什么改动"),
        ("in <https://github.com/a/b|a/b> what changed?", "a/b", "what changed?"),
        ("what changed in vllm/core/scheduler.py?", None, "what changed in vllm/core/scheduler.py?"),
        ("what changed in the scheduler?", None, "what changed in the scheduler?"),
    ],
)
def test_a_repository_named_with_in(text, repo, rest):
    from bot.conversation.period_questions import split_repo

    assert split_repo(text) == (repo, rest)


@pytest.mark.parametrize(
    "text,asks",
    [
        ("hello", False),
        ("thanks a lot", False),
        ("what is new?", True),
        ("上周有什么改动", True),
        ("scheduler changes last week", True),
        ("FP8 吗", True),
        ("the last 90 days", True),
    ],
)
def test_a_mention_without_a_commit_is_a_question_when_it_reads_like_one(text, asks):
    from bot.conversation.period_questions import is_period_question

    assert is_period_question(text, TZ, NOW, 31) is asks

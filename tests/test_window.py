from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import UsageError
from bot.core.window import day_window, is_date_token, parse_window

NOW = datetime(2026, 3, 10, 2, 0, tzinfo=UTC)  # 10:00 in Shanghai, 22:00 (Mar 9) in New York


@pytest.mark.parametrize(
    "spec,tz,start,end,label",
    [
        ("2026-01-28", "Asia/Shanghai", "2026-01-28T00:00:00+08:00", "2026-01-29T00:00:00+08:00", "2026-01-28"),
        ("today", "Asia/Shanghai", "2026-03-10T00:00:00+08:00", "2026-03-11T00:00:00+08:00", "2026-03-10"),
        ("yesterday", "Asia/Shanghai", "2026-03-09T00:00:00+08:00", "2026-03-10T00:00:00+08:00", "2026-03-09"),
        ("today", "America/New_York", "2026-03-09T00:00:00-04:00", "2026-03-10T00:00:00-04:00", "2026-03-09"),
        # DST starts in New York on 2026-03-08: that local day is 23 hours long.
        ("2026-03-08", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", "2026-03-08"),
        (
            "2026-01-20..2026-01-22",
            "UTC",
            "2026-01-20T00:00:00+00:00",
            "2026-01-23T00:00:00+00:00",
            "2026-01-20..2026-01-22",
        ),
        (
            "2026-03-01..yesterday",
            "Asia/Shanghai",
            "2026-03-01T00:00:00+08:00",
            "2026-03-10T00:00:00+08:00",
            "2026-03-01..2026-03-09",
        ),
    ],
)
def test_windows(spec, tz, start, end, label):
    w = parse_window(spec, tz, NOW)
    assert (w.start.isoformat(), w.end.isoformat(), w.label) == (start, end, label)


def test_dst_day_is_23_hours():
    w = parse_window("2026-03-08", "America/New_York", NOW)
    assert (w.end_utc - w.start_utc).total_seconds() == 23 * 3600


@pytest.mark.parametrize(
    "spec,message",
    [
        ("2026-13-01", "not a real calendar date"),
        ("28/01/2026", "is not a date"),
        ("2026-03-11", "is in the future"),
        ("2026-01-22..2026-01-20", "ends before it starts"),
        ("2025-01-01..2026-01-01", "the limit is 31"),
        ("tomorrow", "is not a date"),
    ],
)
def test_bad_specs_are_one_sentence(spec, message):
    with pytest.raises(UsageError) as err:
        parse_window(spec, "Asia/Shanghai", NOW)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unknown_zone():
    with pytest.raises(UsageError, match="Unknown time zone 'Mars/Base'"):
        parse_window("today", "Mars/Base", NOW)


def test_date_tokens():
    assert is_date_token("2026-01-28") and is_date_token("today") and is_date_token("2026-01-01..2026-13-40")
    # a `..` between words that are not dates is a range of refs (tests/test_ranges.py), not of days
    assert not is_date_token("a..b") and not is_date_token("0.11.8..0.11.9")
    assert not is_date_token("vllm-project/vllm") and not is_date_token("subscribe")


def test_a_range_of_one_day_is_that_day():
    w = parse_window("2026-01-28..2026-01-28", "Asia/Shanghai", NOW)
    assert (w.start.isoformat(), w.end.isoformat(), w.label) == (
        "2026-01-28T00:00:00+08:00",
        "2026-01-29T00:00:00+08:00",
        "2026-01-28",
    )


def test_exactly_the_longest_range_is_allowed_one_more_day_is_not():
    w = parse_window("2026-01-01..2026-01-31", "UTC", NOW, max_days=31)
    assert (w.start.isoformat(), w.end.isoformat()) == ("2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00")
    with pytest.raises(UsageError) as err:
        parse_window("2026-01-01..2026-02-01", "UTC", NOW, max_days=31)
    assert str(err.value) == "The range 2026-01-01..2026-02-01 spans 32 days; the limit is 31."


def test_trailing_characters_make_a_date_invalid():
    with pytest.raises(UsageError) as err:
        parse_window("2026-01-280", "UTC", NOW)
    assert str(err.value) == (
        "'2026-01-280' is not a date: use YYYY-MM-DD, a range A..B, today, yesterday, last-week or this-week."
    )


@pytest.mark.parametrize(
    "day,tz,hours",
    [
        (date(2026, 3, 8), "America/New_York", 23),  # spring forward
        (date(2026, 11, 1), "America/New_York", 25),  # fall back
        (date(2026, 1, 28), "Asia/Shanghai", 24),
    ],
)
def test_day_window_on_dst_days(day, tz, hours):
    w = day_window(day, tz)
    assert w.label == day.isoformat()
    assert w.start == datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(tz))
    assert (w.end_utc - w.start_utc).total_seconds() == hours * 3600


def test_date_like_words_are_told_apart_from_repositories():
    # loosely written dates still count as dates, so the user hears why they are not valid
    assert is_date_token("2026-1-5") and is_date_token("2026/01/28") and is_date_token("Yesterday")
    assert not is_date_token("2026-01-28x") and not is_date_token("2026-1-5-rc")
    assert not is_date_token("v2026-01-28") and not is_date_token("release/2026")


# NOW is Tuesday 2026-03-10 in Shanghai: this ISO week began on Monday 03-09, the last one ran 03-02..03-08.
@pytest.mark.parametrize(
    "spec,label",
    [
        ("今天", "2026-03-10"),
        ("昨天", "2026-03-09"),
        ("前天", "2026-03-08"),
        ("2026年1月20日", "2026-01-20"),
        ("2026年01月20号", "2026-01-20"),
        ("1月20日", "2026-01-20"),
        ("3月10日", "2026-03-10"),
        ("上周", "2026-03-02..2026-03-08"),
        ("last-week", "2026-03-02..2026-03-08"),
        ("本周", "2026-03-09..2026-03-10"),
        ("这周", "2026-03-09..2026-03-10"),
        ("this-week", "2026-03-09..2026-03-10"),
        ("前天..今天", "2026-03-08..2026-03-10"),
        ("1月18日..1月20日", "2026-01-18..2026-01-20"),
        ("1月18日至1月20日", "2026-01-18..2026-01-20"),
        ("上周..本周", "2026-03-02..2026-03-10"),
        ("2026-03-01..昨天", "2026-03-01..2026-03-09"),
    ],
)
def test_chinese_date_words_and_weeks(spec, label):
    w = parse_window(spec, "Asia/Shanghai", NOW)
    assert w.label == label and w.tz == "Asia/Shanghai"
    assert is_date_token(spec)


def test_a_week_is_monday_to_sunday_in_the_channels_zone():
    # 22:00 on Monday 03-09 in New York: this week is that Monday alone, last week 03-02..03-08
    assert parse_window("本周", "America/New_York", NOW).label == "2026-03-09"
    w = parse_window("上周", "America/New_York", NOW)
    assert (w.start.isoformat(), w.end.isoformat()) == ("2026-03-02T00:00:00-05:00", "2026-03-09T00:00:00-04:00")


@pytest.mark.parametrize(
    "spec,en,zh",
    [
        (
            "12月20日",
            "2026-12-20 is in the future (today is 2026-03-10 in Asia/Shanghai).",
            "2026-12-20 还没到（Asia/Shanghai 的今天是 2026-03-10）。",
        ),
        ("2月30日", "'2月30日' is not a real calendar date.", "“2月30日”不是真实存在的日期。"),
        ("大后天", "'大后天' is not a date", "“大后天”不是日期"),
    ],
)
def test_bad_chinese_dates_are_said_in_both_languages(spec, en, zh):
    from bot.i18n import localize

    with pytest.raises(UsageError) as err:
        parse_window(spec, "Asia/Shanghai", NOW)
    assert localize(err.value, "en").startswith(en) and localize(err.value, "zh").startswith(zh)


def test_words_around_to_in_a_question_are_not_a_range():
    assert not is_date_token("这个改动到底影响什么") and not is_date_token("昨天到底改了什么")

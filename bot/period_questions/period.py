"""The period a history question is about, read from its words, as a Window of whole local days.

  this week / 本周 / 这周            Monday of this week .. today
  last week / 上周                   Monday .. Sunday of last week
  this month / 本月, last month / 上个月
  today, yesterday / 今天, 昨天, 前天
  since Monday / 自周一以来 / 周一以来  that weekday (the latest one on or before today) .. today
  since 2026-01-19 / 自1月19日以来     that day .. today
  last 3 days / past two weeks / 最近三天 / 过去两周 / 近一周
  2026-01-20, 2026年1月20日, 1月20日  that day
  2026-01-19..2026-01-25, from A to B, between A and B, A至B, 从A到B

Nothing said: the last DEFAULT_DAYS days, today included. The words are taken out of the
question so they are not searched for. Pure: `now` is always passed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from ..core.models import UsageError, Window
from ..core.window import day_start, parse_window, zone
from ..i18n import phrase

DEFAULT_DAYS = 7

_EN_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fourteen": 14,
    "thirty": 30,
    "a": 1,
    "couple of": 2,
    "few": 3,
}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}

# A date as people write one: 2026-01-20, 2026/1/20, 2026年1月20日, 1月20日 (this year).
_DATE = r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}|(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]?)"
_EN_NUM = r"(\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + ")"
_ZH_NUM = r"([0-9]{1,3}|[零一二两三四五六七八九十]{1,3})"
_EN_WD = "|".join(sorted(_EN_WEEKDAYS, key=len, reverse=True))


@dataclass(frozen=True)
class Period:
    window: Window
    question: str  # the question without the period's words
    said: bool  # the question named the period (False: the default)


def _rule(pattern: str):
    return re.compile(pattern, re.IGNORECASE)


# (pattern, kind) tried in order; the first that matches anywhere in the question wins, so the
# longer forms come before the shorter ones they contain.
_RULES = [
    (
        _rule(
            rf"(?:\bfrom\s+|\bbetween\s+|从|自)?({_DATE})\s*(?:\.\.|~|～|—|–|\bto\b|\buntil\b|\btill\b|\bthrough\b|\band\b|至|到)\s*({_DATE})"
        ),
        "range",
    ),
    (_rule(rf"\bsince\s+({_DATE})"), "since_date"),
    (
        _rule(rf"(?:自从|自|从)\s*({_DATE})\s*(?:以来|起|开始|至今|到现在)?|({_DATE})\s*(?:以来|起|至今)"),
        "since_date_zh",
    ),
    (_rule(rf"\bsince\s+(?:last\s+)?({_EN_WD})\b"), "since_weekday"),
    (
        _rule(
            r"(?:自从|自|从)?\s*(?:本周|这周|上周)?(?:周|星期|礼拜)([一二三四五六日天])\s*(?:以来|起|开始|至今|到现在)"
        ),
        "since_weekday_zh",
    ),
    (_rule(r"\bsince\s+yesterday\b"), "since_yesterday"),
    (
        _rule(
            rf"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:last|past|previous)\s+{_EN_NUM}\s+(days?|weeks?|months?)\b"
        ),
        "last_n",
    ),
    (_rule(rf"(?:最近|近|过去|前)\s*{_ZH_NUM}\s*(?:个)?\s*(天|日|周|星期|礼拜|月)"), "last_n_zh"),
    (_rule(r"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:past|last)\s+(day|fortnight|month)\b"), "past_unit"),
    (_rule(r"(?:最近|近)(一周|一个月|一天)"), "past_unit_zh"),
    (_rule(r"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?past\s+week\b"), "past_week"),
    (_rule(r"\b(?:in\s+|during\s+)?this[\s-]week\b|本周|这周|这一周|本星期|这个星期|这星期"), "this_week"),
    (_rule(r"\b(?:in\s+|during\s+)?last[\s-]week\b|上周|上一周|上星期|上个星期"), "last_week"),
    (_rule(r"\b(?:in\s+|during\s+)?this\s+month\b|本月|这个月"), "this_month"),
    (_rule(r"\b(?:in\s+|during\s+)?last\s+month\b|上个月|上月"), "last_month"),
    (_rule(r"\btoday\b|今天|今日"), "today"),
    (_rule(r"\byesterday\b|昨天|昨日"), "yesterday"),
    (_rule(r"前天"), "day_before"),
    (_rule(rf"(?:\bon\s+)?({_DATE})"), "day"),
]


def find_period(question: str, tz: str, now: datetime, max_days: int) -> Period:
    """The period the question names (else the last DEFAULT_DAYS days), and the rest of it.
    A UsageError sentence for a period in the future, backwards, or longer than `max_days`."""
    today = now.astimezone(zone(tz)).date()
    for pattern, kind in _RULES:
        match = pattern.search(question or "")
        if match is None:
            continue
        first, last = _days(kind, match, today)
        rest = (question[: match.start()] + " " + question[match.end() :]).strip()
        return Period(make_window(first, last, tz, today, max_days), " ".join(rest.split()), True)
    first = today - timedelta(days=DEFAULT_DAYS - 1)
    return Period(make_window(first, today, tz, today, max_days), " ".join((question or "").split()), False)


def period_from_flags(since: str | None, until: str | None, tz: str, now: datetime, max_days: int) -> Window:
    """The CLI's --since/--until (each a day as `digest --date` takes one): since..until, since..today,
    or the DEFAULT_DAYS days ending at until."""
    today = now.astimezone(zone(tz)).date()
    last = _one_day(until, tz, now) if until else today
    first = _one_day(since, tz, now) if since else last - timedelta(days=DEFAULT_DAYS - 1)
    if last < first:
        raise UsageError(phrase("history.backwards", since=first.isoformat(), until=last.isoformat()))
    return make_window(first, last, tz, today, max_days)


def make_window(first: date, last: date, tz: str, today: date, max_days: int) -> Window:
    if first > today:
        raise UsageError(phrase("history.future", day=first.isoformat(), today=today.isoformat(), tz=tz))
    if last < first:
        raise UsageError(phrase("history.backwards", since=first.isoformat(), until=last.isoformat()))
    last = min(last, today)  # "this month" ends today
    days = (last - first).days + 1
    if days > max_days:
        raise UsageError(
            phrase("history.too_long", days=days, limit=max_days, since=first.isoformat(), until=last.isoformat())
        )
    label = first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}"
    return Window(start=day_start(first, tz), end=day_start(last + timedelta(days=1), tz), tz=tz, label=label)


# --- internals ---------------------------------------------------------------------------------------


def _one_day(token: str, tz: str, now: datetime) -> date:
    """One day as the digest's --date takes it (the window module's words and formats)."""
    return parse_window(_normal_date(token.strip()), tz, now, max_days=1).start.date()


def _normal_date(token: str) -> str:
    """2026/1/20 and 2026-1-20 → 2026-01-20 (the window module reads the padded form)."""
    m = re.fullmatch(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})", token)
    return f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}" if m else token


def _date(token: str, today: date) -> date:
    token = _normal_date(token.strip())
    m = re.fullmatch(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]?", token)
    parts: tuple[int, ...] | None = (int(m.group(1) or today.year), int(m.group(2)), int(m.group(3))) if m else None
    if parts is None:
        m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", token)
        parts = tuple(map(int, m.groups())) if m else None
    try:
        return date(*parts)  # type: ignore[misc]
    except (TypeError, ValueError):
        raise UsageError(phrase("history.bad_date", value=token)) from None


def _weekday_since(weekday: int, today: date) -> date:
    return today - timedelta(days=(today.weekday() - weekday) % 7)


def _count(word: str) -> int:
    word = word.lower()
    if word.isdigit():
        return int(word)
    if word in _EN_NUMBERS:
        return _EN_NUMBERS[word]
    # Chinese numerals up to 99: 三, 十, 十四, 二十, 二十一
    if "十" in word:
        tens, _, units = word.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(units, 0) if units else 0)
    return _ZH_DIGITS.get(word, 1)


def _days(kind: str, m: re.Match, today: date) -> tuple[date, date]:
    monday = today - timedelta(days=today.weekday())
    if kind == "range":
        return _date(m.group(1), today), _date(m.group(2), today)
    if kind in ("since_date", "since_date_zh"):
        return _date(next(g for g in m.groups() if g), today), today
    if kind == "since_weekday":
        return _weekday_since(_EN_WEEKDAYS[m.group(1).lower()], today), today
    if kind == "since_weekday_zh":
        return _weekday_since(_ZH_WEEKDAYS[m.group(1)], today), today
    if kind == "since_yesterday":
        return today - timedelta(days=1), today
    if kind in ("last_n", "last_n_zh"):
        n = max(_count(m.group(1)), 1)
        unit = m.group(2).lower()
        days = n * 7 if unit[0] in "w周星礼" else n * 30 if unit[0] in "m月" else n
        return today - timedelta(days=days - 1), today
    if kind in ("past_unit", "past_unit_zh"):
        unit = m.group(1).lower()
        days = {"day": 1, "一天": 1, "fortnight": 14, "month": 30, "一个月": 30, "一周": 7}[unit]
        return today - timedelta(days=days - 1), today
    if kind == "past_week":
        return today - timedelta(days=6), today
    if kind == "this_week":
        return monday, today
    if kind == "last_week":
        return monday - timedelta(days=7), monday - timedelta(days=1)
    if kind == "this_month":
        return today.replace(day=1), today
    if kind == "last_month":
        end = today.replace(day=1) - timedelta(days=1)
        return end.replace(day=1), end
    if kind == "today":
        return today, today
    if kind == "yesterday":
        return today - timedelta(days=1), today - timedelta(days=1)
    if kind == "day_before":
        return today - timedelta(days=2), today - timedelta(days=2)
    day = _date(m.group(1), today)
    return day, day

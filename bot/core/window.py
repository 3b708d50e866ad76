"""Turn what a user types for a day or a range into a Window of whole local days in a time zone.
Pure: `now` is always passed in.

  2026-01-28   2026年1月28日   1月28日 (this year)        one day
  today 今天   yesterday 昨天   前天 (the day before)     one day, counted in the zone
  last-week 上周                                         last ISO week, Monday to Sunday
  this-week 本周 这周                                     this ISO week, Monday to today
  A..B  (also A至B, A到B)                                 from the first day of A to the last of B

A `..` between refs that are not dates (`0.11.8..0.11.9`) is a range of commits, not of days
(`is_ref_range`): the sources resolve it (bot/sources/refrange.py).

Errors carry catalogue phrases (bot.i18n) so each reader gets them in their own language.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from settings import check_timezone

from ..i18n import echo, phrase
from .models import UsageError, Window

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # how a weekly subscription names its day
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CJK_DATE = re.compile(r"^(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]?$")  # 2026年1月20日, 1月20日
_RANGE = re.compile(r"\.\.|至|到")
_DAYS_BACK = {"today": 0, "今天": 0, "yesterday": 1, "昨天": 1, "前天": 2}
_WEEKS_BACK = {"this-week": 0, "本周": 0, "这周": 0, "last-week": 1, "上周": 1}


def zone(tz: str) -> ZoneInfo:
    try:
        return check_timezone(tz)
    except ValueError:
        raise UsageError(phrase("errors.bad_tz", value=tz)) from None


def day_start(day: date, tz: str) -> datetime:
    """Local midnight of `day` in `tz` (aware). Built per day, never by adding 24 h, so DST days
    are 23 or 25 hours long as they should be."""
    return datetime.combine(day, time(0, 0), tzinfo=zone(tz))


def _parse_span(token: str, today: date) -> tuple[date, date]:
    """The first and last day a word names (the same day unless it names a week)."""
    token = token.strip().lower()
    if token in _DAYS_BACK:
        day = today - timedelta(days=_DAYS_BACK[token])
        return day, day
    if token in _WEEKS_BACK:
        monday = today - timedelta(days=today.weekday()) - timedelta(weeks=_WEEKS_BACK[token])
        return monday, min(monday + timedelta(days=6), today)
    cjk = _CJK_DATE.match(token)
    if cjk:
        year, month, day_of_month = cjk.groups()
        # No year: this year's, even when that is still to come (said so, not moved a year back).
        day = _real_date(token, int(year) if year else today.year, int(month), int(day_of_month))
        return day, day
    if not _DATE.match(token):
        raise UsageError(phrase("errors.not_a_date", value=echo(token)))
    day = _real_date(token, *map(int, token.split("-")))
    return day, day


def _real_date(token: str, year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError:
        raise UsageError(phrase("errors.bad_date", value=token)) from None


def parse_window(spec: str, tz: str, now: datetime, max_days: int = 31) -> Window:
    """Parse a day, a week word or an inclusive range. Days after today (in `tz`) are refused."""
    today = now.astimezone(zone(tz)).date()
    spec = (spec or "yesterday").strip()
    parts = _RANGE.split(spec, maxsplit=1)
    if len(parts) == 2:
        first, last = _parse_span(parts[0], today)[0], _parse_span(parts[1], today)[1]
        if last < first:
            raise UsageError(phrase("errors.range_backwards", value=spec))
    else:
        first, last = _parse_span(spec, today)
    if last > today:
        raise UsageError(phrase("errors.future", day=last.isoformat(), today=today.isoformat(), tz=tz))
    days = (last - first).days + 1
    if days > max_days:
        raise UsageError(phrase("errors.range_too_long", value=spec, days=days, limit=max_days))
    label = first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}"
    return Window(start=day_start(first, tz), end=day_start(last + timedelta(days=1), tz), tz=tz, label=label)


def day_window(day: date, tz: str) -> Window:
    return Window(start=day_start(day, tz), end=day_start(day + timedelta(days=1), tz), tz=tz, label=day.isoformat())


def is_ref_range(token: str) -> bool:
    """Is this word a range of refs, `0.11.8..0.11.9` or `v1.2..main` (tags, branches or SHAs),
    rather than a range of days? A `..` with a side that does not look like a date."""
    if ".." not in token:
        return False
    return not all(_datelike(side) for side in token.lower().split("..", 1))


def split_ref_range(token: str) -> tuple[str, str]:
    """The two refs of `A..B`; a malformed one (`A...B`, an empty side) is one sentence."""
    first, _, last = token.strip().partition("..")
    if not first or not last or last.startswith(".") or first.endswith(".") or ".." in last:
        raise UsageError(phrase("errors.bad_ref_range", value=echo(token)))
    return first, last


def _datelike(side: str) -> bool:
    return _one_day_word(side) or bool(re.match(r"^\d{4}[-/]\d", side) or _CJK_DATE.match(side))


def is_date_token(token: str) -> bool:
    """Does this word look like a date spec (so command parsers can tell it from a repo)?
    A range of refs (`is_ref_range`) is not."""
    t = token.lower()
    if ".." in t:
        return not is_ref_range(t)  # a range of days: a bad one is a date error, not a repository
    sides = _RANGE.split(t, maxsplit=1)
    if len(sides) == 2:  # 至 / 到 are ordinary words in a question: both sides must be dates
        return all(_one_day_word(side) for side in sides)
    return _one_day_word(t) or bool(re.match(r"^\d{4}-\d{1,2}-\d{1,2}$", t) or re.match(r"^\d{4}/\d", t))


def _one_day_word(t: str) -> bool:
    return t in _DAYS_BACK or t in _WEEKS_BACK or bool(_DATE.match(t)) or bool(_CJK_DATE.match(t))


def week_window(day: date, tz: str, today: date | None = None) -> Window:
    """The ISO week (Monday to Sunday) holding `day`; a week still running ends with `today`.
    Labelled as a range, `2026-01-19..2026-01-25`."""
    monday = day - timedelta(days=day.weekday())
    last = monday + timedelta(days=6)
    if today is not None and last > today:
        last = today
    return Window(
        start=day_start(monday, tz),
        end=day_start(last + timedelta(days=1), tz),
        tz=tz,
        label=f"{monday.isoformat()}..{last.isoformat()}",
    )

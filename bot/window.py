"""Turn what a user types ("2026-01-28", "2026-01-20..2026-01-22", "today", "yesterday") into a
Window of whole local days in a time zone. Pure: `now` is always passed in.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from settings import check_timezone

from .models import UsageError, Window

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def zone(tz: str) -> ZoneInfo:
    try:
        return check_timezone(tz)
    except ValueError as exc:
        raise UsageError(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None


def day_start(day: date, tz: str) -> datetime:
    """Local midnight of `day` in `tz` (aware). Built per day, never by adding 24 h, so DST days
    are 23 or 25 hours long as they should be."""
    return datetime.combine(day, time(0, 0), tzinfo=zone(tz))


def _parse_day(token: str, today: date) -> date:
    token = token.strip().lower()
    if token == "today":
        return today
    if token == "yesterday":
        return today - timedelta(days=1)
    if not _DATE.match(token):
        raise UsageError(f"'{token}' is not a date: use YYYY-MM-DD, a range A..B, today or yesterday.")
    try:
        return date.fromisoformat(token)
    except ValueError:
        raise UsageError(f"'{token}' is not a real calendar date.") from None


def parse_window(spec: str, tz: str, now: datetime, max_days: int = 31) -> Window:
    """Parse a day or an inclusive range of days. Days after today (in `tz`) are refused."""
    today = now.astimezone(zone(tz)).date()
    spec = (spec or "yesterday").strip()
    if ".." in spec:
        first_s, _, last_s = spec.partition("..")
        first, last = _parse_day(first_s, today), _parse_day(last_s, today)
        if last < first:
            raise UsageError(f"The range {spec} ends before it starts.")
    else:
        first = last = _parse_day(spec, today)
    if last > today:
        raise UsageError(f"{last.isoformat()} is in the future (today is {today.isoformat()} in {tz}).")
    days = (last - first).days + 1
    if days > max_days:
        raise UsageError(f"The range {spec} spans {days} days; the limit is {max_days}.")
    label = first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}"
    return Window(start=day_start(first, tz), end=day_start(last + timedelta(days=1), tz), tz=tz, label=label)


def day_window(day: date, tz: str) -> Window:
    return Window(start=day_start(day, tz), end=day_start(day + timedelta(days=1), tz), tz=tz,
                  label=day.isoformat())


def is_date_token(token: str) -> bool:
    """Does this word look like a date spec (so command parsers can tell it from a repo)?"""
    t = token.lower()
    return t in ("today", "yesterday") or ".." in t or bool(_DATE.match(t)) or bool(
        re.match(r"^\d{4}-\d{1,2}-\d{1,2}$", t) or re.match(r"^\d{4}/\d", t))

"""Schedule maths across time zones and DST (pure), table-tested."""
from datetime import date, datetime, timedelta, timezone

import pytest

from bot.models import Subscription
from bot.schedule import due_day, next_run, occurrence

UTC = timezone.utc


@pytest.mark.parametrize("now,at,tz,expected", [
    # Shanghai has no DST: 09:30 local is 01:30 UTC.
    (datetime(2026, 1, 28, 1, 0, tzinfo=UTC), "09:30", "Asia/Shanghai", datetime(2026, 1, 28, 1, 30, tzinfo=UTC)),
    (datetime(2026, 1, 28, 1, 30, tzinfo=UTC), "09:30", "Asia/Shanghai", datetime(2026, 1, 29, 1, 30, tzinfo=UTC)),
    # New York spring forward (2026-03-08): 09:00 EDT is 13:00 UTC, the day before 14:00 UTC.
    (datetime(2026, 3, 7, 15, 0, tzinfo=UTC), "09:00", "America/New_York", datetime(2026, 3, 8, 13, 0, tzinfo=UTC)),
    # 02:30 does not exist on that day in New York: it runs at 03:30 EDT (07:30 UTC).
    (datetime(2026, 3, 8, 5, 0, tzinfo=UTC), "02:30", "America/New_York", datetime(2026, 3, 8, 7, 30, tzinfo=UTC)),
    # Fall back (2026-11-01): 01:30 happens twice; the first (EDT, 05:30 UTC) is used.
    (datetime(2026, 11, 1, 4, 0, tzinfo=UTC), "01:30", "America/New_York", datetime(2026, 11, 1, 5, 30, tzinfo=UTC)),
    # Local midnight crossing: 00:05 in Tokyo is 15:05 UTC the previous day.
    (datetime(2026, 1, 28, 16, 0, tzinfo=UTC), "00:05", "Asia/Tokyo", datetime(2026, 1, 29, 15, 5, tzinfo=UTC)),
])
def test_next_run(now, at, tz, expected):
    assert next_run(now, at, tz) == expected


def test_occurrence_is_utc():
    assert occurrence(date(2026, 1, 28), "09:30", "Asia/Shanghai") == datetime(2026, 1, 28, 1, 30, tzinfo=UTC)


def sub(at="09:00", tz="Asia/Shanghai"):
    return Subscription("slack", "C1", "acme/widgets", at=at, tz=tz)


@pytest.mark.parametrize("now,expected", [
    (datetime(2026, 1, 28, 0, 59, tzinfo=UTC), None),  # 08:59 local: not yet
    (datetime(2026, 1, 28, 1, 0, tzinfo=UTC), date(2026, 1, 27)),  # 09:00: yesterday's digest
    (datetime(2026, 1, 28, 1, 20, tzinfo=UTC), date(2026, 1, 27)),  # was down at 09:00, up at 09:20
    (datetime(2026, 1, 28, 4, 0, tzinfo=UTC), date(2026, 1, 27)),  # exactly at the end of catch-up
    (datetime(2026, 1, 28, 4, 1, tzinfo=UTC), None),  # too late: missed, not posted at noon
])
def test_due_day_with_catchup(now, expected):
    assert due_day(now, sub(), timedelta(minutes=180)) == expected


def test_due_day_late_evening_run_caught_up_after_midnight():
    s = sub(at="23:30")
    # 00:10 local on the 29th: the 28th's 23:30 run is 40 minutes late, within catch-up;
    # it posts the digest of the 27th (the day before the run's day).
    now = datetime(2026, 1, 28, 16, 10, tzinfo=UTC)
    assert due_day(now, s, timedelta(minutes=60)) == date(2026, 1, 27)

"""Schedule maths across time zones and DST (pure), table-tested."""

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.models import Subscription
from bot.runtime.schedule import due_day, next_run, occurrence
from tests.shared.schedule import NOW

UTC = UTC


@pytest.mark.parametrize(
    "now,at,tz,expected",
    [
        # Shanghai has no DST: 09:30 local is 01:30 UTC.
        (datetime(2026, 1, 28, 1, 0, tzinfo=UTC), "09:30", "Asia/Shanghai", datetime(2026, 1, 28, 1, 30, tzinfo=UTC)),
        (datetime(2026, 1, 28, 1, 30, tzinfo=UTC), "09:30", "Asia/Shanghai", datetime(2026, 1, 29, 1, 30, tzinfo=UTC)),
        # New York spring forward (2026-03-08): 09:00 EDT is 13:00 UTC, the day before 14:00 UTC.
        (datetime(2026, 3, 7, 15, 0, tzinfo=UTC), "09:00", "America/New_York", datetime(2026, 3, 8, 13, 0, tzinfo=UTC)),
        # 02:30 does not exist on that day in New York: it runs at 03:30 EDT (07:30 UTC).
        (datetime(2026, 3, 8, 5, 0, tzinfo=UTC), "02:30", "America/New_York", datetime(2026, 3, 8, 7, 30, tzinfo=UTC)),
        # Fall back (2026-11-01): 01:30 happens twice; the first (EDT, 05:30 UTC) is used.
        (
            datetime(2026, 11, 1, 4, 0, tzinfo=UTC),
            "01:30",
            "America/New_York",
            datetime(2026, 11, 1, 5, 30, tzinfo=UTC),
        ),
        # Local midnight crossing: 00:05 in Tokyo is 15:05 UTC the previous day.
        (datetime(2026, 1, 28, 16, 0, tzinfo=UTC), "00:05", "Asia/Tokyo", datetime(2026, 1, 29, 15, 5, tzinfo=UTC)),
    ],
)
def test_next_run(now, at, tz, expected):
    assert next_run(now, at, tz) == expected


def test_occurrence_is_utc():
    assert occurrence(date(2026, 1, 28), "09:30", "Asia/Shanghai") == datetime(2026, 1, 28, 1, 30, tzinfo=UTC)


def sub(at="09:00", tz="Asia/Shanghai"):
    return Subscription("slack", "C1", "acme/widgets", at=at, tz=tz)


@pytest.mark.parametrize(
    "now,expected",
    [
        (datetime(2026, 1, 28, 0, 59, tzinfo=UTC), None),  # 08:59 local: not yet
        (datetime(2026, 1, 28, 1, 0, tzinfo=UTC), date(2026, 1, 27)),  # 09:00: yesterday's digest
        (datetime(2026, 1, 28, 1, 20, tzinfo=UTC), date(2026, 1, 27)),  # was down at 09:00, up at 09:20
        (datetime(2026, 1, 28, 4, 0, tzinfo=UTC), date(2026, 1, 27)),  # exactly at the end of catch-up
        (datetime(2026, 1, 28, 4, 1, tzinfo=UTC), None),  # too late: missed, not posted at noon
    ],
)
def test_due_day_with_catchup(now, expected):
    assert due_day(now, sub(), timedelta(minutes=180)) == expected


def test_due_day_late_evening_run_caught_up_after_midnight():
    s = sub(at="23:30")
    # 00:10 local on the 29th: the 28th's 23:30 run is 40 minutes late, within catch-up;
    # it posts the digest of the 27th (the day before the run's day).
    now = datetime(2026, 1, 28, 16, 10, tzinfo=UTC)
    assert due_day(now, s, timedelta(minutes=60)) == date(2026, 1, 27)


# --- the clock loop, on the real queue (arq on Redis) and the terminal platform -----------------------

import io  # noqa: E402

from bot.delivery.spec import scheduled_spec  # noqa: E402
from handlers.console import ConsolePlatform  # noqa: E402


async def test_the_clock_queues_each_due_push_once_and_each_digest_build_once(clock_chat):
    chat, settings, jobs = clock_chat
    for channel in ("console", "other"):  # two channels want the same digest
        await chat.subs.upsert(Subscription("console", channel, "acme/widgets", at="09:00", tz="Asia/Shanghai"))
    await chat.subs.upsert(Subscription("console", "later", "acme/widgets", at="10:00", tz="Asia/Shanghai"))
    await chat.subs.upsert(Subscription("feishu", "oc_1", "acme/widgets", at="09:00", tz="Asia/Shanghai"))
    await chat.subs.upsert(Subscription("slack", "C1", "acme/widgets", at="09:00", tz="Asia/Shanghai"))
    chat.platforms["slack"] = ConsolePlatform(out=io.StringIO())  # this process serves Slack, not Feishu
    clock = chat.make_clock(settings=settings, now=lambda: NOW, jobs=jobs)
    first = {(s.platform, s.channel, day, outcome) for s, day, outcome in await clock.tick()}
    assert first == {
        ("console", "console", date(2026, 1, 28), "queued"),
        ("console", "other", date(2026, 1, 28), "queued"),
        ("slack", "C1", date(2026, 1, 28), "queued"),
    }  # not yet 10:00; Feishu served elsewhere
    queued = sorted(j.decode() for j in await jobs.pool.zrange(jobs.queue, 0, -1))
    assert len(queued) == 4 and sum(":build:" in j for j in queued) == 1  # one build for all three
    second = [outcome for _, _, outcome in await clock.tick()]
    assert second == ["already queued"] * 3
    assert await jobs.pending() == 4
    done = Subscription("console", "console", "acme/widgets", at="09:00", tz="Asia/Shanghai")
    await chat.store.set_json(scheduled_spec(chat.store, done, date(2026, 1, 28)).ledger, {"at": "…"})
    third = {
        s.channel: outcome
        for s, _, outcome in await chat.make_clock(settings=settings, now=lambda: NOW, jobs=jobs).tick()
    }
    assert third == {"console": "already delivered", "other": "already queued", "C1": "already queued"}


async def test_the_clock_loop_runs_until_stopped(clock_chat, caplog):
    import asyncio
    import logging

    chat, settings, jobs = clock_chat
    await chat.subs.upsert(Subscription("console", "console", "acme/widgets", at="09:00", tz="Asia/Shanghai"))
    stop = asyncio.Event()
    clock = chat.make_clock(settings=settings.model_copy(update={"clock_interval": 0.05}), now=lambda: NOW, jobs=jobs)
    with caplog.at_level(logging.INFO, logger="bot.runtime.schedule"):
        task = asyncio.create_task(clock.run_forever(stop))
        for _ in range(600):  # two ticks: the first queues, the second finds it queued
            if any("already queued" in r.getMessage() for r in caplog.records) or task.done():
                break
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 30)
    lines = [r.getMessage() for r in caplog.records]
    assert "push acme/widgets → console:console for 2026-01-28: queued" in lines
    assert "push acme/widgets → console:console for 2026-01-28: already queued" in lines


async def test_one_build_per_branch(clock_chat):
    chat, settings, jobs = clock_chat
    await chat.subs.upsert(Subscription("console", "a", "acme/widgets", at="09:00", tz="Asia/Shanghai", branch="dev"))
    await chat.subs.upsert(
        Subscription("console", "b", "acme/widgets", at="09:00", tz="Asia/Shanghai", branch="release")
    )
    await chat.make_clock(settings=settings, now=lambda: NOW, jobs=jobs).tick()
    queued = [j.decode() for j in await jobs.pool.zrange(jobs.queue, 0, -1)]
    assert sum(":build:" in j for j in queued) == 2


async def test_the_clock_waits_its_interval_and_stop_ends_the_wait(clock_chat, caplog):
    import asyncio
    import logging

    chat, settings, jobs = clock_chat
    await chat.subs.upsert(Subscription("console", "console", "acme/widgets", at="09:00", tz="Asia/Shanghai"))
    stop = asyncio.Event()
    clock = chat.make_clock(settings=settings.model_copy(update={"clock_interval": 3600}), now=lambda: NOW, jobs=jobs)
    with caplog.at_level(logging.INFO, logger="bot.runtime.schedule"):
        task = asyncio.create_task(clock.run_forever(stop))
        for _ in range(600):
            if any(": queued" in r.getMessage() for r in caplog.records) or task.done():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # room for a second tick, which must not come for an hour
        stop.set()
        await asyncio.wait_for(task, 30)  # stopping does not wait out the hour
    pushes = [r.getMessage() for r in caplog.records if r.getMessage().startswith("push ")]
    assert pushes == ["push acme/widgets → console:console for 2026-01-28: queued"]

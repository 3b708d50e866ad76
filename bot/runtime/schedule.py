"""When each subscription's push is due, and the clock loop that delivers it exactly once.

Pure part: `occurrence`, `next_run`, `due_day`, `due_week` — table-tested across time zones and DST.
A weekly subscription (`weekday` set) posts the roll-up of the ISO week before its run.
Loop part: every CLOCK_INTERVAL seconds, each due (channel, repository, day) is enqueued as a
keyed delivery job (bot/delivery/runner.py: lease, ledger, resumable); a push missed while the bot was
down is still made if it is at most CATCHUP_MINUTES late. Watches (bot/watch/) are due the same
way, each at its person's time; each due (person, pattern, day) is one keyed "watch" job. Kept
digests with fallbacks to retry are due the same way: one keyed "improve" job each (bot/improve/).
Each subscription with `alerts high` is polled every ALERT_POLL_SECONDS: one keyed "alert" job
per (conversation, repository, period) (bot/alerts/).
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from settings import Settings

from ..alerts.spec import AlertPoll, alert_poll, alerting
from ..channels.subscriptions import Subscriptions
from ..core.chat_platform import Platforms
from ..core.models import BotError, Subscription
from ..core.store import Store
from ..core.window import WEEKDAYS, zone
from ..delivery.once import JobQueue
from ..delivery.spec import DeliverySpec, scheduled_spec
from ..watch.spec import WatchRun, watch_run
from ..watch.watch_store import Watch, Watches

if TYPE_CHECKING:
    from .queue import Jobs

log = logging.getLogger(__name__)


def occurrence(day: date, at: str, tz: str) -> datetime:
    """The UTC instant of local time `at` on `day`. A time skipped by a DST jump runs at the
    same wall-clock distance after the jump (02:30 → 03:30); a repeated one runs the first time."""
    hh, mm = (int(x) for x in at.split(":"))
    local = datetime.combine(day, time(hh, mm), tzinfo=zone(tz))  # fold=0: first of a repeated hour
    return local.astimezone(UTC)


def last_occurrence(now: datetime, at: str, tz: str) -> tuple[datetime, date]:
    """The most recent scheduled run at or before `now`, and the local day it belongs to."""
    today = now.astimezone(zone(tz)).date()
    # Tomorrow's run is always after `now` and yesterday's always before: two days to look at.
    for day in (today, today - timedelta(days=1)):
        run = occurrence(day, at, tz)
        if run <= now:
            return run, day
    raise AssertionError("unreachable: yesterday's run is always in the past")  # pragma: no mutate


def next_run(now: datetime, at: str, tz: str) -> datetime:
    """The first scheduled run strictly after `now`."""
    today = now.astimezone(zone(tz)).date()
    for day in (today, today + timedelta(days=1)):  # tomorrow's run is always after `now`
        run = occurrence(day, at, tz)
        if run > now:
            return run
    raise AssertionError("unreachable: tomorrow's run is always in the future")  # pragma: no mutate


def due_week(now: datetime, sub: Subscription, catchup: timedelta) -> date | None:
    """The Monday of the week whose roll-up is due now (the ISO week before the run's), or None.
    Due from the weekday's scheduled instant until `catchup` later."""
    today = now.astimezone(zone(sub.tz)).date()
    weekday = WEEKDAYS.index(sub.weekday or "mon")
    last = today - timedelta(days=(today.weekday() - weekday) % 7)  # the latest such weekday, today included
    for day in (last, last - timedelta(days=7)):
        run = occurrence(day, sub.at, sub.tz)
        if run <= now:
            if now - run <= catchup:
                return day - timedelta(days=day.weekday() + 7)
            return None
    raise AssertionError("unreachable: last week's run is always in the past")  # pragma: no mutate


def due_day(now: datetime, sub: Subscription | Watch, catchup: timedelta) -> date | None:
    """The day whose digest is due now (the day before the run), or None. A run is due from its
    scheduled instant until `catchup` later."""
    run, run_day = last_occurrence(now, sub.at, sub.tz)
    if now - run <= catchup:
        return run_day - timedelta(days=1)
    return None


S = TypeVar("S", contravariant=True)


class RunsJobs(Protocol[S]):
    """A runner of keyed jobs (bot/delivery/once.py's JobRunner: deliveries, watches, alerts)."""

    async def run_or_queue(self, spec: S, jobs: JobQueue | None) -> str: ...


class ImprovePass(Protocol):
    async def tick(self, now: datetime, jobs: JobQueue | None = None) -> list[tuple[str, str]]: ...


class LearnsAhead(Protocol):
    """The learned profiles (bot/taste/book.py): today's of each repository, learnt in the
    background once the UTC day has begun, before any digest of the day asks for it."""

    async def learn_ahead(self, repos: list[str], now: datetime) -> None: ...


class Clock:
    """Every CLOCK_INTERVAL seconds, enqueue each due (conversation, repository, day) as a keyed
    delivery job (two clocks enqueue one job; a delivered day is in the ledger and never queued
    again), plus one build job per distinct digest so it starts once for all its subscribers.
    Without a job queue (the console, tests) the deliveries run here, concurrently."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        subs: Subscriptions,
        platforms: Platforms,
        deliveries: RunsJobs[DeliverySpec],
        improver: ImprovePass,
        watch_runner: RunsJobs[WatchRun],
        alert_runner: RunsJobs[AlertPoll],
        now: Callable[[], datetime] | None = None,
        jobs: Jobs | None = None,
        profiles: LearnsAhead | None = None,
    ):
        self.store = store
        self.profiles = profiles
        self.settings = settings
        self.subs = subs
        self.platforms = platforms
        self.deliveries = deliveries
        self.improver = improver
        self.watch_runner = watch_runner
        self.alert_runner = alert_runner
        self.now = now or (lambda: datetime.now(UTC))
        self.jobs = jobs
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"  # names its health key (bot/runtime/health.py)

    async def tick(self) -> list[tuple[Subscription, date, str]]:
        """One pass over every subscription; returns what happened (for logs and tests)."""
        now = self.now()
        catchup = timedelta(minutes=self.settings.catchup_minutes)
        due = []
        subs = await self.subs.all()
        for sub in subs:
            if sub.platform not in self.platforms:
                continue  # another process serves that platform
            day = due_week(now, sub, catchup) if sub.weekly else due_day(now, sub, catchup)
            if day is not None and await self._reaches(sub):
                due.append((sub, day, scheduled_spec(self.store, sub, day)))
        if self.jobs is None:  # run here, concurrently
            outcomes = await asyncio.gather(*(self.deliveries.run_or_queue(spec, None) for _, _, spec in due))
        else:
            jobs = self.jobs
            outcomes = [await self.deliveries.run_or_queue(spec, jobs) for _, _, spec in due]
            await self._enqueue_builds(jobs, [(sub, spec) for sub, _, spec in due])
        await self.tick_watches(now, catchup)
        await self.tick_alerts(now)
        for key, outcome in await self.improver.tick(now, self.jobs):  # kept digests' fallbacks, retried
            log.info("improve %s: %s", key, outcome)
        if self.profiles is not None:  # last, and never in the pushes' way: starts learning, does not wait
            try:
                await self.profiles.learn_ahead(sorted({s.repo for s in subs}), now)
            except BotError as exc:
                log.warning("learning the day's profiles ahead skipped this tick: %s", exc)
        return [(sub, day, outcome) for (sub, day, _), outcome in zip(due, outcomes)]

    async def _reaches(self, sub: Subscription) -> bool:
        """Whether the conversation's workspace can be sent to (a platform installed into many
        workspaces says no for one that removed the app: its subscriptions wait, kept, until it
        is installed again). Platforms without the question always can."""
        return await self.platforms[sub.platform].reaches(sub.channel)

    async def _enqueue_builds(self, jobs: Jobs, due: list[tuple[Subscription, DeliverySpec]]) -> None:
        builds: dict[tuple[str, ...], dict[str, Any]] = {}
        for sub, spec in due:
            filt = spec.path_filter()  # a filtered digest is another digest (and analyses fewer commits)
            by = spec.author_filter()
            ident = (
                sub.repo.lower(),
                sub.branch or "",
                spec.window["start"],
                spec.window["end"],
                sub.tz,
                sub.lang,
                *((filt.key(),) if filt else ()),
                *((by.key(),) if by else ()),
            )
            builds.setdefault(
                ident,
                {
                    "repo": sub.repo,
                    "branch": sub.branch,
                    "window": spec.window,
                    "lang": sub.lang,
                    "paths": list(filt.paths),
                    "exclude": list(filt.exclude),
                    "authors": list(by.authors),
                    "exclude_authors": list(by.exclude),
                },
            )
        for ident, build in builds.items():
            await jobs.enqueue("build", build, job_id=jobs.job_id("build", *ident))

    async def tick_watches(self, now: datetime, catchup: timedelta) -> list[tuple[Watch, date, str]]:
        """Each due watch's previous day, run once: a keyed job (its done key says when it is
        done); without a job queue, run here one after the other."""
        outcomes: list[tuple[Watch, date, str]] = []
        for watch in await Watches(self.store).all():
            if watch.platform not in self.platforms:
                continue  # another process serves that platform
            day = due_day(now, watch, catchup)
            if day is None or not await self.platforms[watch.platform].reaches(watch.channel):
                continue
            outcome = await self.watch_runner.run_or_queue(watch_run(self.store, watch, day), self.jobs)
            log.info("watch %s %s → %s:%s for %s: %s", watch.repo, watch.glob, watch.platform, watch.user, day, outcome)
            outcomes.append((watch, day, outcome))
        return outcomes

    async def tick_alerts(self, now: datetime) -> list[tuple[Subscription, str]]:
        """Each alerting subscription's poll of the current ALERT_POLL_SECONDS period, run once:
        a keyed job; without a job queue, run here one after the other. A channel with the daily
        and the weekly subscription of one repository polls it once."""
        outcomes: list[tuple[Subscription, str]] = []
        seen: set[str] = set()
        for sub in await self.subs.all():
            if not alerting(sub) or sub.platform not in self.platforms or not await self._reaches(sub):
                continue
            poll = alert_poll(self.store, sub, now, self.settings.alert_poll_seconds)
            if poll.key in seen:
                continue
            seen.add(poll.key)
            outcome = await self.alert_runner.run_or_queue(poll, self.jobs)
            log.debug("alerts %s → %s:%s: %s", sub.repo, sub.platform, sub.channel, outcome)
            outcomes.append((sub, outcome))
        return outcomes

    async def run_forever(self, stop: asyncio.Event) -> None:
        from . import health

        log.info(
            "clock started (every %.0f s, catch-up %d min)", self.settings.clock_interval, self.settings.catchup_minutes
        )
        while not stop.is_set():
            try:
                for sub, day, outcome in await self.tick():
                    log.info("push %s → %s:%s for %s: %s", sub.repo, sub.platform, sub.channel, day, outcome)
                await health.clock_beat(self.store, self.settings, self.id)  # only after a whole tick
            except BotError as exc:  # Redis down: say so once per tick, keep ticking until it is back
                log.error("clock tick failed: %s", exc)
            except Exception:  # a bug in one tick must not stop the clock
                log.exception("clock tick failed")
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.settings.clock_interval)
            except TimeoutError:
                pass

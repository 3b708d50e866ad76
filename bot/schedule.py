"""When each subscription's daily push is due, and the clock loop that delivers it exactly once.

Pure part: `occurrence`, `next_run`, `due_day` — table-tested across time zones and DST.
Loop part: every CLOCK_INTERVAL seconds, each due (channel, repository, day) is delivered under a
Redis lease (two clocks → one post) and marked done in a ledger (restarts → no duplicate); a push
missed while the bot was down is still made if it is at most CATCHUP_MINUTES late.
"""
from __future__ import annotations

import asyncio
import logging
import os
import uuid
from datetime import date, datetime, time, timedelta, timezone

from .models import BotError, Subscription
from .window import day_window, zone

log = logging.getLogger(__name__)

LEDGER_TTL = 40 * 86400
LEASE_SECONDS = 60  # renewed every 20 s while delivering; a crashed clock's lease lapses in a minute
MAX_ATTEMPTS = 3


def occurrence(day: date, at: str, tz: str) -> datetime:
    """The UTC instant of local time `at` on `day`. A time skipped by a DST jump runs at the
    same wall-clock distance after the jump (02:30 → 03:30); a repeated one runs the first time."""
    hh, mm = (int(x) for x in at.split(":"))
    local = datetime.combine(day, time(hh, mm), tzinfo=zone(tz))  # fold=0: first of a repeated hour
    return local.astimezone(timezone.utc)


def last_occurrence(now: datetime, at: str, tz: str) -> tuple[datetime, date]:
    """The most recent scheduled run at or before `now`, and the local day it belongs to."""
    today = now.astimezone(zone(tz)).date()
    for day in (today + timedelta(days=1), today, today - timedelta(days=1), today - timedelta(days=2)):
        run = occurrence(day, at, tz)
        if run <= now:
            return run, day
    raise AssertionError("unreachable: a run two days ago is always in the past")


def next_run(now: datetime, at: str, tz: str) -> datetime:
    """The first scheduled run strictly after `now`."""
    today = now.astimezone(zone(tz)).date()
    for offset in range(-1, 3):
        run = occurrence(today + timedelta(days=offset), at, tz)
        if run > now:
            return run
    raise AssertionError("unreachable")


def due_day(now: datetime, sub: Subscription, catchup: timedelta) -> date | None:
    """The day whose digest is due now (the day before the run), or None. A run is due from its
    scheduled instant until `catchup` later."""
    run, run_day = last_occurrence(now, sub.at, sub.tz)
    if now - run <= catchup:
        return run_day - timedelta(days=1)
    return None


class Clock:
    def __init__(self, chat, settings, now=None):
        self.chat = chat
        self.store = chat.store
        self.settings = settings
        self.now = now or (lambda: datetime.now(timezone.utc))
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def _keys(self, sub: Subscription, day: date) -> tuple[str, str, str, str]:
        parts = (sub.platform, sub.channel, sub.repo.lower(), day.isoformat())
        k = self.store.k
        return k("ledger", *parts), k("lease", *parts), k("delivery", *parts), k("attempts", *parts)

    async def tick(self) -> list[tuple[Subscription, date, str]]:
        """One pass over every subscription; returns what happened (for logs and tests)."""
        now = self.now()
        catchup = timedelta(minutes=self.settings.catchup_minutes)
        results = []
        for sub in await self.chat.subs.all():
            if sub.platform not in self.chat.platforms:
                continue  # another process serves that platform
            day = due_day(now, sub, catchup)
            if day is None:
                continue
            results.append((sub, day, await self._deliver_once(sub, day)))
        return results

    async def _deliver_once(self, sub: Subscription, day: date) -> str:
        ledger, lease, progress, attempts = self._keys(sub, day)
        if await self.store.get_json(ledger):
            return "already delivered"
        if not await self.store.set_json(lease, self.owner, ttl=LEASE_SECONDS, nx=True):
            return "another clock is delivering"
        keeper = asyncio.create_task(self._keep_lease(lease))
        try:
            await self.chat.deliver_subscription(sub, day_window(day, sub.tz), progress)
            await self.store.set_json(ledger, {"at": self.now().isoformat(), "by": self.owner}, ttl=LEDGER_TTL)
            return "delivered"
        except BotError as exc:
            return await self._failed(sub, ledger, attempts, str(exc))
        except Exception as exc:  # noqa: BLE001 — the clock must outlive any one delivery
            log.exception("delivery of %s to %s:%s failed", sub.repo, sub.platform, sub.channel)
            return await self._failed(sub, ledger, attempts, type(exc).__name__)
        finally:
            keeper.cancel()
            await self.store.delete(lease)

    async def _failed(self, sub: Subscription, ledger: str, attempts_key: str, reason: str) -> str:
        """Retry on the next ticks; after MAX_ATTEMPTS say so in the channel once and stop."""
        log.warning("delivery of %s to %s:%s failed: %s", sub.repo, sub.platform, sub.channel, reason)
        attempts = await self.store.incr(attempts_key, LEDGER_TTL)
        if attempts < MAX_ATTEMPTS:
            return f"failed ({reason}); will retry"
        await self.store.set_json(ledger, {"failed": reason}, ttl=LEDGER_TTL)
        try:
            await self.chat.report_push_failure(sub, attempts, reason)
        except Exception:  # noqa: BLE001
            log.exception("could not report the failed delivery")
        return f"gave up ({reason})"

    async def _keep_lease(self, lease: str) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            await self.store.expire(lease, LEASE_SECONDS)

    async def run_forever(self, stop: asyncio.Event) -> None:
        log.info("clock started (every %.0f s, catch-up %d min)", self.settings.clock_interval,
                 self.settings.catchup_minutes)
        while not stop.is_set():
            try:
                for sub, day, outcome in await self.tick():
                    log.info("push %s → %s:%s for %s: %s", sub.repo, sub.platform, sub.channel, day, outcome)
            except BotError as exc:  # Redis down: say so once per tick, keep ticking until it is back
                log.error("clock tick failed: %s", exc)
            except Exception:  # noqa: BLE001
                log.exception("clock tick failed")
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.settings.clock_interval)
            except asyncio.TimeoutError:
                pass

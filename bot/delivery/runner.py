"""A digest into one conversation, as a resumable job: the same machinery for a scheduled push
and for a `/digest` asked in a channel.

A delivery is described by a `DeliverySpec` (JSON, so it can be queued) and identified by its
`key`. Running it twice never posts twice: a lease makes one runner at a time, the progress
state under `key` (parent message, thread messages sent) lets a run killed at any moment resume
where it stopped, and keyed sends let the platform adapter find a message that was posted just
before the kill. Scheduled pushes also have a ledger per (conversation, repository, day) that
says "done" (or "failed" after MAX_ATTEMPTS) for good.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from ..channels.alerted import AlertLedger
from ..channels.owner_mentions import OwnerMappings
from ..channels.subscriptions import Subscriptions
from ..channels.threads import Threads
from ..core import metrics
from ..core.chat_platform import MessageRef, Notice
from ..core.current_job import CURRENT_JOB
from ..core.models import BotError, RetryLater, Window, to_dict
from ..core.store import StoreUnavailable
from ..core.tenants import SHARED, acting_for, scope_of
from ..core.window import parse_window, week_window, zone
from ..digest.builder import DigestBuilder
from ..digest.rollup import areas_of, shown_entries
from ..i18n import Count, localize, text
from ..report.service import Reports
from ..sources.opened import Sources
from .fork import downstream_of, tell_conflicts
from .once import Job, JobRunner, held
from .post import PROGRESS_TTL, Plan, UncertainSend, deliver_digest
from .size import Asked, Target, one_per_repo, to_analyse
from .spec import LEDGER_TTL, MAX_ATTEMPTS, STORE_RETRY, DeliverySpec

log = logging.getLogger(__name__)

PROGRESS_EVERY = 1.5  # seconds between progress-message edits (platform edit limits, and calm)


def _kind(spec: DeliverySpec, window: Window) -> str:
    """The catalogue suffix naming what is being built: a day's digest (""), a range's, a roll-up."""
    return "_week" if spec.week else "_range" if ".." in window.label else ""


@dataclass(eq=False)
class Deliveries(JobRunner[DeliverySpec]):
    sources: Sources
    builder: DigestBuilder
    subs: Subscriptions
    threads: Threads
    reports: Reports | None
    monotonic: Callable[[], float] = field(default=time.monotonic, init=False)  # paces the progress edits

    def job(self, spec: DeliverySpec) -> Job:
        """A scheduled push is closed for good by its ledger (`spec.ledger`); one on demand has none."""
        return Job(
            "deliver",
            to_dict(spec),
            (spec.key,),
            spec.key + ":lock",
            done=spec.ledger,
            attempts=spec.attempts,
            already="already delivered",
        )

    async def run(self, spec: DeliverySpec) -> str:
        """Deliver (or finish delivering) `spec`. Returns what happened, for logs and tests;
        raises RetryLater when another runner holds it or a scheduled push should be retried."""
        store, job, lease = self.store, self.job(spec), self.lease
        work: list[asyncio.Task] = []  # the sending, which is stopped if the lock is lost
        taken = asyncio.Event()

        def lost() -> None:
            # our lease lapsed (a stalled process) and another runner took the delivery over:
            # stop sending at once; it resumes from the saved progress
            log.warning("delivery lock %s was taken over by another runner; stopping this run", job.lock)
            taken.set()
            for task in work:
                task.cancel()

        # One runner at a time, held as long as the job's own lease (JOB_LEASE, renewed).
        async with held(store, job.lock, lease, lost) as owner:
            if owner is None:
                raise RetryLater("another worker is delivering", lease / 2)
            try:
                # read under the lock: a runner that held it before us may have just finished
                if job.done and await store.get_json(job.done):
                    return job.already
                # An on-demand digest's fresh analyses are its workspace's tokens; a scheduled
                # push's build is shared by every subscriber of the repository: the deployment's.
                with acting_for(SHARED if job.done else scope_of(spec.platform, spec.channel)):
                    work.append(asyncio.create_task(self._deliver(spec)))
                try:
                    outcome = await work[0]
                except asyncio.CancelledError:
                    if not taken.is_set():
                        raise
                    raise RetryLater("another worker took the delivery over", lease / 2) from None
                if job.done:
                    await store.set_json(job.done, {"at": self.clock().isoformat(), "by": owner}, ttl=LEDGER_TTL)
                metrics.count("deliveries", platform=spec.platform, outcome=outcome)
                return outcome
            except (asyncio.CancelledError, RetryLater):
                raise
            except UncertainSend as exc:  # retrying could post twice: the ledger closes it, once
                log.warning("delivery of %s to %s:%s stopped: %s", spec.repo, spec.platform, spec.channel, exc)
                if job.done:
                    await store.set_json(job.done, {"uncertain": str(exc)}, ttl=LEDGER_TTL)
                metrics.count("deliveries", platform=spec.platform, outcome="uncertain")
                return "uncertain"
            except Exception as exc:  # the log has the details, the channel one line
                if isinstance(exc, StoreUnavailable) and (job.done or CURRENT_JOB.get()):
                    # Redis went away mid-delivery: nothing can be recorded, so run the job again
                    # once it is back; the progress state makes that a resumption.
                    raise RetryLater("storage unavailable", STORE_RETRY) from None
                metrics.count("deliveries", platform=spec.platform, outcome="failed")
                if not job.done:
                    raise  # on demand: the request that asked reports it to its asker
                if not isinstance(exc, BotError):
                    log.exception("delivery of %s to %s:%s failed", spec.repo, spec.platform, spec.channel)
                return await self._failed(spec, exc if isinstance(exc, BotError) else type(exc).__name__)

    async def _deliver(self, spec: DeliverySpec) -> str:
        platform = self.platforms[spec.platform]
        window = spec.window_obj()
        source = self.sources.get(spec.repo)
        progress = await self._progress_message(platform, spec, source.name, window) if spec.progress else None
        cfg = await self.subs.config(spec.platform, spec.channel)
        # A re-run (its worker died, or Redis went away mid-thread) after the building line became
        # the digest: that line is the digest now, and no progress or failure edit may replace it.
        if progress is not None and (await self.store.get_json(spec.key) or {}).get("parent"):
            progress = None
        on_progress = self._progress_editor(platform, progress, spec, source.name, window) if progress else None
        try:
            digest = await self.builder.build(
                source,
                window,
                spec.lang,
                spec.branch,
                progress=on_progress,
                paths=spec.path_filter(),
                authors=spec.author_filter(),
                scope=scope_of(spec.platform, spec.channel),
            )
            # a roll-up groups its commits by area: read from their files (cached by the build)
            week = (
                await areas_of(self.builder, source, shown_entries(digest, spec.min_importance)) if spec.week else None
            )
            # a range of refs is an upgrade report: its features and fixes are grouped by area too
            upgrade = (
                await areas_of(self.builder, source, shown_entries(digest))
                if window.is_range and not spec.week
                else None
            )
        except Exception as exc:  # on demand, the person who asked reads why
            if progress is None:
                raise
            reason = exc if isinstance(exc, BotError) else type(exc).__name__
            if not isinstance(exc, BotError):
                log.exception("digest for %s %s failed", source.name, window.label)
            line = text(
                spec.lang,
                "notices.build_failed" + _kind(spec, window),
                repo=source.name,
                label=window.label,
                reason=localize(reason, spec.lang),
            )
            await platform.update(progress, Notice(line, "error", spec.lang))
            return "failed"
        if spec.fork:
            digest = await downstream_of(self.settings, spec, digest, source)
        if not digest.entries and not spec.post_empty:
            return "skipped (empty)"
        # what was alerted into this conversation on its own (bot/alerts/) says so, on a copy
        digest = await AlertLedger(self.store).marked(spec.platform, spec.channel, spec.repo, digest)
        mapped = await OwnerMappings(self.store).of(spec.platform, spec.channel)
        parent = await deliver_digest(
            platform,
            self.store,
            spec.channel,
            Plan(
                digest,
                spec.min_importance,
                spec.attach or cfg.file,
                report=self._publisher(scope_of(spec.platform, spec.channel)),
                bots=spec.bots,
                week=week,
                upgrade=upgrade,
                files_supported=platform.supports_files,
                empty_hint=await self._empty_hint(spec, window, cfg) if not digest.entries else "",
                owner_map={k: (m.kind, m.id) for k, m in mapped.items()},
            ),
            replace_ref=progress,
            thread=spec.thread,
            progress_key=spec.key,
            now=lambda: self.clock().timestamp(),
        )
        if parent is not None:  # an empty one too: a question in its thread is told it has no commits
            await self.threads.remember_digest(spec.platform, spec.channel, parent.thread_root, spec.repo, digest)
        if spec.fork and spec.owner:
            await tell_conflicts(platform, self.store, spec, digest)
        return "delivered"

    async def _progress_message(self, platform, spec: DeliverySpec, name: str, window: Window) -> MessageRef:
        """The "building…" line, posted once per delivery even across a crash and a re-run."""
        key = spec.key + ":progress"
        saved = await self.store.get_json(key)
        if saved:
            return MessageRef(spec.channel, saved["id"], saved.get("thread"))
        line = text(spec.lang, "progress.building" + _kind(spec, window), repo=name, label=window.label)
        if spec.week and spec.analyse:  # a roll-up past REQUEST_MAX_COMMITS: say it takes a while
            line = text(
                spec.lang,
                "progress.building_week_many",
                repo=name,
                label=window.label,
                commits=Count(spec.analyse, "counts.commit").say(spec.lang),
            )
        ref = await platform.send(spec.channel, Notice(line, "progress", spec.lang), thread=spec.thread, key=key)
        await self.store.set_json(key, {"id": ref.id, "thread": ref.thread}, ttl=PROGRESS_TTL)
        return ref

    def _publisher(self, scope: str):
        """Publishes the digest's report page for a conversation of `scope` (its level form records
        into that workspace's corrections); None without report pages."""
        publish = getattr(self.reports, "publish", None)
        if publish is None:
            return None

        async def report(digest):
            return await publish(digest, scope=scope)

        return report

    def _progress_editor(self, platform, progress: MessageRef, spec: DeliverySpec, name: str, window: Window):
        last_at, last_line = float("-inf"), ""  # the first progress is always shown

        async def on_progress(done: int, total: int) -> None:
            nonlocal last_at, last_line
            line = text(spec.lang, "progress.analysing", repo=name, label=window.label, done=done, total=total)
            now = self.monotonic()
            if total and line != last_line and (now - last_at >= PROGRESS_EVERY):
                last_at, last_line = now, line
                try:
                    await platform.update(progress, Notice(line, "progress", spec.lang))
                except BotError:
                    pass  # a missed progress edit is cosmetic

        return on_progress

    async def _empty_hint(self, spec: DeliverySpec, window: Window, cfg) -> str:
        """On demand, a quiet day's "no new commits" says what to try — a command the bot then
        accepts, counted as it will count it (bot/delivery/size.py): the whole of last week when
        it fits REQUEST_MAX_COMMITS, else last week's roll-up when that fits ROLLUP_MAX_COMMITS,
        else nothing. It repeats the request's repositories and filters."""
        if not (spec.progress and spec.prefix) or spec.week or ".." in window.label:
            return ""
        asked = Asked.from_dict(spec.asked)
        targets: list[Target]
        if asked.repos:
            targets = [(repo, None) for repo in asked.repos]
        else:
            subs = await self.subs.for_channel(spec.platform, spec.channel)
            targets = [(s.repo, s) for s in subs] or [(spec.repo, None)]
        now = self.clock()
        settings = self.settings

        def last_week(tz: str) -> Window:
            return parse_window("last-week", tz, now, settings.max_range_days)

        def rollup(tz: str) -> Window:
            today = now.astimezone(zone(tz)).date()
            return week_window(today - timedelta(days=7), tz, today)

        again = asked.again()
        if await self._fits(one_per_repo(targets, False), last_week, asked, cfg, settings.request_max_commits):
            return text(spec.lang, "notices.empty_hint", prefix=spec.prefix, again=again)
        if await self._fits(one_per_repo(targets, True), rollup, asked, cfg, settings.rollup_max_commits):
            return text(spec.lang, "notices.empty_hint_week", prefix=spec.prefix, again=again)
        return ""

    async def _fits(self, targets, window_of, asked: Asked, cfg, limit: int) -> bool:
        """Whether each target's window holds at most `limit` commits still to analyse."""
        for repo, sub in targets:
            tz = sub.tz if sub else cfg.tz
            try:
                source = self.sources.get(repo)
                branch = (sub.branch if sub else None) or await source.default_branch()
                fresh, _ = await to_analyse(
                    self.builder,
                    source,
                    window_of(tz),
                    branch,
                    sub.lang if sub else cfg.lang,
                    sub,
                    asked,
                    self.settings.include_merges,
                    limit,
                )
            except BotError:  # cannot be counted: not suggested
                return False
            if len(fresh) > limit:
                return False
        return True

    async def _failed(self, spec: DeliverySpec, reason: BotError | str) -> str:
        """A scheduled push that failed: retry later; after MAX_ATTEMPTS say so in the channel
        once and stop."""
        log.warning("delivery of %s to %s:%s failed: %s", spec.repo, spec.platform, spec.channel, reason)
        assert spec.attempts is not None and spec.ledger is not None  # scheduled_spec sets both
        attempts = await self.store.incr(spec.attempts, LEDGER_TTL)
        if attempts < MAX_ATTEMPTS:
            raise RetryLater(f"failed ({reason}); will retry", self.settings.clock_interval * 2**attempts)
        await self.store.set_json(spec.ledger, {"failed": str(reason)}, ttl=LEDGER_TTL)
        try:
            line = text(
                spec.lang, "notices.push_failed", repo=spec.repo, n=attempts, reason=localize(reason, spec.lang)
            )
            await self.platforms[spec.platform].send(spec.channel, Notice(line, "error", spec.lang))
        except Exception:  # the push has failed already; its report must not fail the job too
            log.exception("could not report the failed delivery")
        return f"gave up ({reason})"

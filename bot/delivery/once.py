"""The one pattern every keyed job follows — deliveries, watches, alerts and improvements — and
one message sent once under a key, across crashes and restarts.

A `Job` is what a runner makes of what it is asked to run: the worker's entry point and its
arguments, the parts of its job id (the same job enqueued by two clocks is one job), the lock
held while it runs, the key that says it is done for good, and the key counting its failed
attempts. `run_or_queue` is the one place that decides how it runs: here when the process has
no job queue, else not at all when its done key says so, else as a keyed job. `JobRunner` is the
runners' common constructor, and `run_once` the run around a watch's or an alert's sends, done
once under a lease (`held`).

Before a send, the state under `key` records that it is being tried and when; after it, that it
is done (and the message's id). A run killed in between is run again and re-sends with the same
key, which the platform recognises while it deduplicates (Slack: the key in the message's
metadata; Feishu: the `uuid`, for an hour); after that the conversation is read back, and a
message that cannot be found out is not sent again. The runs hold a lease while they send, so a
state found "trying" is always a dead run's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from settings import Settings

from ..channels.threads import Threads
from ..core.chat_platform import MessageRef, Platforms
from ..core.models import BotError, Digest, RetryLater
from ..core.store import Store, StoreUnavailable
from .post import DEDUPE_MARGIN
from .posted import PostedMessages
from .spec import LEDGER_TTL, MAX_ATTEMPTS, STORE_RETRY

log = logging.getLogger(__name__)

S = TypeVar("S")


@dataclass(frozen=True)
class Job:
    """One keyed job, as its runner names it (`JobRunner.job`)."""

    kind: str  # the job worker's entry point: "deliver", "watch", "alert", "improve"
    args: Any  # what the worker is handed: the spec as JSON, or a kept digest's key
    id: tuple[Any, ...]  # the job id's parts: the same job, enqueued twice, is one job
    lock: str  # held while it runs: one runner at a time
    done: str | None = None  # says "done" (or "failed") for good: then never queued nor run again
    attempts: str | None = None  # failed attempts so far
    already: str = "already done"  # what a run or a tick says of a done job


class Queued(Protocol):
    @property
    def new(self) -> bool: ...


class JobQueue(Protocol):
    """The enqueue side of the job queue (bot/runtime/queue.py's `Jobs`)."""

    def job_id(self, *parts: Any) -> str: ...

    async def enqueue(
        self, function: str, *args: Any, job_id: str | None = None, defer: float | None = None
    ) -> Queued: ...


async def run_or_queue(store: Store, jobs: JobQueue | None, job: Job, here: Callable[[], Awaitable[str]]) -> str:
    """Run here when there is no job queue (the console, tests; a RetryLater says why not now);
    else skip a job its done key says is done; else queue it, keyed. What happened, for logs."""
    if jobs is None:
        try:
            return await here()
        except RetryLater as exc:
            return str(exc)
    if job.done is not None and await store.get_json(job.done):
        return job.already
    queued = await jobs.enqueue(job.kind, job.args, job_id=jobs.job_id(job.kind, *job.id))
    return "queued" if queued.new else "already queued"


@dataclass(eq=False)
class JobRunner(Generic[S]):
    """What every runner of keyed jobs is handed (each declares the rest it uses: the sources, the
    builder…), and its two faces: `job` (how its spec runs as a job) and `run` (what the worker,
    or the clock without a queue, calls)."""

    store: Store
    settings: Settings
    platforms: Platforms
    clock: Callable[[], datetime]

    busy: ClassVar[str]  # run's RetryLater while another run holds the lock (the queue's, never shown)
    ttl: ClassVar[int] = LEDGER_TTL  # how long the done key is kept

    def job(self, spec: S) -> Job:
        raise NotImplementedError

    def what(self, spec: S) -> str:
        """The run, as a log line names it."""
        raise NotImplementedError

    async def work(self, spec: S) -> str:
        """One run's body, under the lock, while the job is not done."""
        raise NotImplementedError

    @property
    def lease(self) -> int:
        """How long a run holds its lock without renewing it: the job's own lease (JOB_LEASE), so a
        dead runner's lock lapses when its job becomes runnable again."""
        return max(1, round(self.settings.job_lease))

    async def run(self, spec: S) -> str:
        """Run (or finish) `spec` once; what happened, for logs and tests. RetryLater when another
        run holds the lock, or after a failure worth retrying."""
        job = self.job(spec)
        assert job.done is not None and job.attempts is not None  # a run_once job is closed for good
        return await run_once(
            self.store,
            lambda: self.work(spec),
            lock=job.lock,
            busy=self.busy,
            done_key=job.done,
            attempts_key=job.attempts,
            ttl=self.ttl,
            lease=self.lease,
            retry_after=self.settings.clock_interval,
            now=lambda: self.clock().isoformat(),
            what=self.what(spec),
        )

    async def run_or_queue(self, spec: S, jobs: JobQueue | None) -> str:
        """`spec` run here without a queue, else skipped when done, else queued (see above)."""
        return await run_or_queue(self.store, jobs, self.job(spec), lambda: self.run(spec))


async def send_once(
    store: Store,
    threads: Threads,
    platform,
    channel: str,
    content,
    key: str,
    *,
    now: Callable[[], float],
    ttl: int,
    what: str,
    digest: Digest | None = None,
    state: dict | None = None,
    mark: dict | None = None,
) -> MessageRef | None:
    """Send `content` once under `key`; None when it was sent before or cannot be known to be
    missing. A commit message (`digest` given) has its thread remembered for questions and its
    content for its level buttons. `state`: the key's state as the caller already read it (used
    when Redis has none); `mark`: fields kept with the state (an alert's `alerted`); `what`
    names the message in the log."""
    state = await store.get_json(key) or state or {}
    if state.get("done"):
        return None
    mark = mark or {}
    at = now()
    window = platform.send_dedupe_window
    if state.get("at") is not None and window is not None and at - float(state["at"]) >= window - DEDUPE_MARGIN:
        ref = await platform.send_unless_posted(channel, content, key=key, since=float(state["at"]))
        if ref is None:
            log.warning(
                "%s %s may be missing: its send had no answer, the platform no longer deduplicates it "
                "and the conversation could not be read back; not sent again",
                what,
                key,
            )
    else:
        if state.get("at") is None:
            await store.set_json(key, {"at": at, **mark}, ttl=ttl)  # trying, before the send
        ref = await platform.send(channel, content, key=key)
    if ref is not None and digest is not None:
        await threads.remember_digest(platform.name, channel, ref.thread_root, digest.repo_id, digest)
        await PostedMessages(store).remember(platform.name, ref, content, None)  # its level buttons redraw it
    await store.set_json(key, {"done": True, "id": ref.id if ref else None, "at": at, **mark}, ttl=ttl)
    return ref


async def keep_lease(store: Store, lock: str, owner: str, lease: int, lost: Callable[[], None] | None = None) -> None:
    """Renew the run's lease every third of it until cancelled; a failed renewal is tried again.
    `lost`: called (and the renewing stops) when another runner holds the lock now."""
    while True:
        await asyncio.sleep(lease / 3)
        try:
            ours = await store.renew(lock, owner, lease)
        except BotError:
            continue
        if not ours and lost is not None:
            lost()
            return


@asynccontextmanager
async def held(
    store: Store, lock: str, lease: int, lost: Callable[[], None] | None = None
) -> AsyncIterator[str | None]:
    """`lock` held (renewed, then released) for the block: its owner's name, or None when another
    runner holds it. A dead runner's lock lapses after `lease` seconds."""
    owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    if not await store.lease(lock, owner, lease):
        yield None
        return
    keeper = asyncio.create_task(keep_lease(store, lock, owner, lease, lost))
    try:
        yield owner
    finally:
        keeper.cancel()
        try:
            await store.release(lock, owner)
        except BotError:
            pass  # it lapses by itself


async def run_once(
    store: Store,
    work: Callable[[], Awaitable[str]],
    *,
    lock: str,
    busy: str,
    done_key: str,
    attempts_key: str,
    ttl: int,
    lease: int,
    retry_after: float,
    now: Callable[[], str],
    what: str,
) -> str:
    """Run `work` once, holding `lock` while it runs; what happened, for logs and tests.

    Already done (`done_key`): "already done". Another runner holds the lock: RetryLater(`busy`).
    Redis away: RetryLater, to resume later. Any other failure: RetryLater after `retry_after` ×
    2^attempts, and after MAX_ATTEMPTS the run is closed as "gave up (…)" (logged as `what`)."""
    async with held(store, lock, lease) as owner:
        if owner is None:
            raise RetryLater(busy, lease / 2)
        try:
            if await store.get_json(done_key):
                return "already done"
            outcome = await work()
            await store.set_json(done_key, {"at": now()}, ttl=ttl)
            return outcome
        except (asyncio.CancelledError, RetryLater):
            raise
        except StoreUnavailable:
            raise RetryLater("storage unavailable", STORE_RETRY) from None
        except Exception as exc:  # retried a few times, then logged and closed
            attempts = await store.incr(attempts_key, ttl)
            if not isinstance(exc, BotError):
                log.exception("%s failed", what)
            if attempts < MAX_ATTEMPTS:
                raise RetryLater(f"failed ({exc}); will retry", retry_after * 2**attempts) from None
            await store.set_json(done_key, {"failed": str(exc)}, ttl=ttl)
            return f"gave up ({exc})"

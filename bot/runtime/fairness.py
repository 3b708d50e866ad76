"""Fairness between workspaces in the job queue: one tenant's burst cannot starve another's push.

arq starts due jobs oldest first, so 200 questions from one workspace would make every other
workspace's scheduled push wait behind them. Here each job belongs to a tenant — its platform and
workspace (`bot/core/tenants.py`), or the platform alone when it serves one workspace — and a
worker with a free slot starts, among the due jobs of every tenant, the head of the tenant that
has the fewest jobs running across all workers, the least recently served on a tie (then the
oldest head). One tenant alone still uses every slot; when another has work waiting, each slot
that frees goes to whoever runs least. Nothing is pre-empted: a tenant holding every slot keeps
them until its jobs end, so another tenant waits at most one job's length, never a burst's.

Builds and improvements are shared: a build serves the deliveries of every workspace subscribed
to that digest (and is enqueued by the clock, never by a user), so charging it to one of them
would make that one pay for the others; they are their own tenant, `SHARED`.

Kept in Redis, so every worker sees the same counts (keys under `PREFIX jobs:fair:`):
  q:<tenant>    zset   job id → the ms it is due (arq's score), RUNNING while it runs
  of            hash   job id → tenant (a job arq hands back after a crash keeps its tenant)
  run:<tenant>  zset   job id → when its lease ends: a killed worker's entries lapse with it
  served        zset   tenant → the ms its last job started (forgotten after a day)
  tenants       zset   the tenants with jobs in their queue (a poll weighs only these)

arq's queue stays the truth: an entry whose job arq no longer holds is dropped when seen, and a
due job the index does not know (queued before this existed, or whose index write failed) is
still started from arq's own window of due jobs, as the shared tenant.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import tenants
from ..core.store import RedisError

log = logging.getLogger(__name__)

SHARED = "*"  # builds and improvements: work every workspace's deliveries share
RUNNING = 1e15  # a running job's score in its tenant's queue: far past any due time (ms)
SERVED_MEMORY = 86400.0  # a tenant's last service is remembered this long (for ties)
# A tenant leaves the list only when its queue is empty, checked and removed in one step: an
# enqueue (which adds to both in one transaction) cannot fall between the two.
DROP_IF_EMPTY = """
if redis.call('zcard', KEYS[1]) == 0 then return redis.call('zrem', KEYS[2], ARGV[1]) end
return 0
"""


def tenant_of_job(function: str, args: Sequence[Any]) -> str:
    """The tenant a job's arguments name: `slack/T0123` (one of several workspaces) or `slack`
    (a platform serving one). Anything without a conversation or person is SHARED."""
    try:
        if function == "request":
            platform, address = args[1]["platform"], args[1]["channel"]
        elif function in ("deliver", "alert"):
            platform, address = args[0]["platform"], args[0]["channel"]
        elif function == "watch":
            platform, address = args[0]["platform"], args[0]["user"]
        else:
            return SHARED
    except (IndexError, KeyError, TypeError):
        return SHARED
    workspace = tenants.tenant_of(str(address))
    return f"{platform}/{workspace}" if workspace else str(platform)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Tenant:
    """One tenant as the scheduler weighs it."""

    running: int
    served: float  # ms of its last start; 0 when never served
    due: list[tuple[float, str]] = field(default_factory=list)  # (score, job id), oldest first

    def key(self) -> tuple[int, float, float]:
        return (self.running, self.served, self.due[0][0] if self.due else float("inf"))


def fair_order(queue: dict[str, Tenant], clock: float) -> list[str]:
    """Every due job, in the order the scheduler starts them if nothing finishes meanwhile: the
    tenant with the fewest running, then the least recently served, then the oldest head."""
    order: list[str] = []
    waiting = {name: t for name, t in queue.items() if t.due}
    tick = clock
    while waiting:
        name = min(waiting, key=lambda n: waiting[n].key())
        tenant = waiting[name]
        _, job_id = tenant.due.pop(0)
        order.append(job_id)
        tenant.running += 1
        tick += 1
        tenant.served = tick
        if not tenant.due:
            del waiting[name]
    return order


def starts_before(queue: dict[str, Tenant], mine: str, ahead: int, clock: float) -> int:
    """How many jobs start before the one that has `ahead` due jobs of its own tenant `mine`
    ahead of it (the others' due jobs as counted in `queue[..].due`'s lengths)."""
    counts = {name: len(t.due) for name, t in queue.items()}
    counts[mine] = ahead + 1
    state = {name: [t.running, t.served, t.due[0][0] if t.due else float("inf")] for name, t in queue.items()}
    picks, tick = 0, clock
    while True:
        name = min((n for n, c in counts.items() if c > 0), key=lambda n: tuple(state[n]))
        if name == mine and counts[mine] == 1:
            return picks
        picks += 1
        counts[name] -= 1
        tick += 1
        state[name][0] += 1
        state[name][1] = tick


class FairIndex:
    """The per-tenant index beside arq's queue (see the module doc). `pool` is the queue's Redis."""

    def __init__(self, pool: Any, prefix: str, queue: str, in_progress_prefix: str):
        self.pool = pool
        self.queue = queue
        self.in_progress = in_progress_prefix
        self.base = f"{prefix}jobs:fair:"
        self.tenants_key = self.base + "tenants"
        self.of_key = self.base + "of"
        self.served_key = self.base + "served"

    def q(self, tenant: str) -> str:
        return f"{self.base}q:{tenant}"

    def run(self, tenant: str) -> str:
        return f"{self.base}run:{tenant}"

    # --- the enqueue side -------------------------------------------------------------------------

    async def queued(self, job_id: str, tenant: str) -> None:
        """A job was just enqueued (new). Its score is arq's own, so that jobs queued within one
        millisecond keep arq's order. A failure here loses nothing: the job still runs from
        arq's window, only unattributed."""
        try:
            due_ms = await self.pool.zscore(self.queue, job_id)
            if due_ms is None:
                return  # already run and finished
            async with self.pool.pipeline(transaction=True) as pipe:
                pipe.hset(self.of_key, job_id, tenant)
                pipe.zadd(self.q(tenant), {job_id: due_ms})
                pipe.zadd(self.tenants_key, {tenant: time.time()})
                await pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning("job %s: fairness index not written (%s)", job_id, type(exc).__name__)

    # --- the worker side --------------------------------------------------------------------------

    async def started(self, job_id: str, tenant: str, lease: float) -> None:
        now = time.time()
        async with self.pool.pipeline(transaction=False) as pipe:
            pipe.hset(self.of_key, job_id, tenant)
            pipe.zadd(self.q(tenant), {job_id: RUNNING})
            pipe.zadd(self.run(tenant), {job_id: now + lease})
            pipe.zadd(self.served_key, {tenant: now * 1000})
            pipe.zadd(self.tenants_key, {tenant: now})
            await pipe.execute()

    def renew(self, pipe: Any, job_id: str, tenant: str, lease: float) -> None:
        pipe.zadd(self.run(tenant), {job_id: time.time() + lease})

    async def ended(self, job_id: str, tenant: str, again_ms: float | None) -> None:
        """The job ended here: done for good (`again_ms` None), or back in arq's queue due then."""
        async with self.pool.pipeline(transaction=False) as pipe:
            pipe.zrem(self.run(tenant), job_id)
            if again_ms is None:
                pipe.zrem(self.q(tenant), job_id)
                pipe.hdel(self.of_key, job_id)
            else:
                pipe.zadd(self.q(tenant), {job_id: again_ms})
                pipe.zadd(self.tenants_key, {tenant: time.time()})
            await pipe.execute()

    async def _load(self, extra: Iterable[bytes], per_tenant: int) -> tuple[dict[str, Tenant], dict[str, str]]:
        """Each tenant's running count, last service and first due jobs (checked against arq's
        queue: gone → dropped from the index; running or deferred → left out), plus the jobs of
        `extra` (arq's own window) the index misses. Returns (tenants, job id → tenant)."""
        now, ms = time.time(), now_ms()
        window = [j.decode() if isinstance(j, bytes) else j for j in extra]
        async with self.pool.pipeline(transaction=False) as pipe:
            pipe.zrange(self.tenants_key, 0, -1)
            if window:
                pipe.hmget(self.of_key, window)
            names, *of = await pipe.execute()
        owner: dict[str, str] = {}
        for job_id, t in zip(window, of[0] if of else [], strict=False):
            owner[job_id] = t.decode() if t else SHARED
        listed = [n.decode() for n in names]
        names = [*listed, *({*owner.values()} - {*listed})]  # and the window's tenants the list misses
        async with self.pool.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.zcount(self.run(name), now, "+inf")
                pipe.zscore(self.served_key, name)
                pipe.zrangebyscore(self.q(name), "-inf", ms, start=0, num=per_tenant, withscores=True)
            loaded = await pipe.execute()
        queue: dict[str, Tenant] = {}
        for i, name in enumerate(names):
            running, served, heads = loaded[3 * i : 3 * i + 3]
            queue[name] = Tenant(int(running), served or 0.0)
            for job_id, _ in heads:
                owner.setdefault(job_id.decode(), name)
        ids = list(owner)
        if not ids:
            return queue, owner
        async with self.pool.pipeline(transaction=False) as pipe:
            for job_id in ids:
                pipe.zscore(self.queue, job_id)
            pipe.mget([self.in_progress + j for j in ids])
            *scores, progress = await pipe.execute()
        stale = []
        for job_id, score, busy in zip(ids, scores, progress, strict=True):
            name = owner[job_id]
            if score is None:
                stale.append((job_id, name))  # finished, or given up by arq: not queued any more
            elif busy is None and score <= ms:
                queue[name].due.append((score, job_id))
        for t in queue.values():
            t.due.sort()
        if stale:
            async with self.pool.pipeline(transaction=False) as pipe:
                for job_id, name in stale:
                    pipe.zrem(self.q(name), job_id)
                    pipe.hdel(self.of_key, job_id)
                await pipe.execute()
        return queue, owner

    async def order(self, window: Sequence[bytes], free: int) -> list[str]:
        """The due jobs a worker with `free` slots should try, best first (a few spares for the
        ones another worker claims first)."""
        queue, _ = await self._load(window, per_tenant=free + 4)
        return fair_order(queue, float(now_ms()))

    async def ahead(self, job_id: str) -> int | None:
        """How many due jobs start before `job_id` in the fair order (None: not indexed)."""
        raw = await self.pool.hget(self.of_key, job_id)
        if raw is None:
            return None
        mine = raw.decode()
        ms = now_ms()
        own = await self.pool.zscore(self.q(mine), job_id)
        if own is None or own > ms:
            return None
        queue, _ = await self._load((), per_tenant=1)
        async with self.pool.pipeline(transaction=False) as pipe:
            for name in queue:
                pipe.zcount(self.q(name), "-inf", ms)
            pipe.zrank(self.q(mine), job_id)  # ahead of it in its tenant: score, then id, as arq
            *due, mine_ahead = await pipe.execute()
        for t, n in zip(queue.values(), due, strict=True):
            head = t.due[:1] or [(float("inf"), "")]
            t.due = head * int(n) if n else []  # only the counts and the head's score matter
        if mine_ahead is None:
            return 0  # it started meanwhile
        queue.setdefault(mine, Tenant(0, 0.0))
        return starts_before(queue, mine, int(mine_ahead), float(ms))

    async def tidy(self) -> None:
        """Drop lapsed running entries (killed workers), running marks of jobs arq no longer
        holds (given up after a crash), tenants whose queue is empty, and old services."""
        now = time.time()
        names = [n.decode() for n in await self.pool.zrange(self.tenants_key, 0, -1)]
        async with self.pool.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.zremrangebyscore(self.run(name), "-inf", now)
                pipe.zrangebyscore(self.q(name), RUNNING, "+inf", start=0, num=50)
            pipe.zremrangebyscore(self.served_key, "-inf", (now - SERVED_MEMORY) * 1000)
            found = await pipe.execute()
        for i, name in enumerate(names):
            marked = [m.decode() for m in found[2 * i + 1]]
            if marked:
                async with self.pool.pipeline(transaction=False) as pipe:
                    for job_id in marked:
                        pipe.zscore(self.queue, job_id)
                    scores = await pipe.execute()
                gone = [j for j, score in zip(marked, scores, strict=True) if score is None]
                if gone:
                    await self.pool.zrem(self.q(name), *gone)
                    await self.pool.hdel(self.of_key, *gone)
            await self.pool.eval(DROP_IF_EMPTY, 2, self.q(name), self.tenants_key, name)

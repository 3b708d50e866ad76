"""Fairness between workspaces in the job queue (issue 35 §4): one workspace's burst cannot starve
another's scheduled push. Real Redis, real arq workers (several, sharing only Redis; one of them a
process killed mid-job); the jobs themselves only note when they start (tests/shared/fair_jobs.py),
so what is asserted is the queue's order and counts — never a duration."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable

from arq.constants import in_progress_key_prefix

from bot.runtime.queue import Jobs, JobWorker
from tests.conftest import ROOT
from tests.shared.fair_jobs import Recorder, conv, push

SLOTS = 4  # per worker


async def until(condition: Callable[[], bool], limit: float = 60) -> None:
    """Wait for a condition (the limit only stops a hang; nothing is asserted about time)."""
    for _ in range(int(limit / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the queue stopped moving")


async def settled(jobs: Jobs) -> None:
    """Until arq has finished every job (recorded its end): a worker closed before that cancels
    the last jobs' bookkeeping."""
    for _ in range(6000):  # a hang guard, as `until`
        if await jobs.pending() == 0:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("jobs still queued")


async def workers(settings, recorder: Recorder, n: int) -> list[JobWorker]:
    started = []
    for _ in range(n):
        worker = JobWorker(settings, recorder)
        await worker.start()
        started.append(worker)
    return started


async def test_a_workspace_burst_does_not_starve_another_workspace_push(make_settings):
    """Workspace A asks 200 questions at once; B's scheduled push, queued behind them, starts
    within one round of the slots — and every job runs exactly once."""
    settings = make_settings(worker_max_jobs=SLOTS)
    jobs = await Jobs.connect(settings)
    recorder = Recorder(hold=0.02)
    running: list[JobWorker] = []
    try:
        burst = [(await jobs.enqueue("request", "message", conv("TA"), {"text": f"q{i}"})).job_id for i in range(200)]
        running = await workers(settings, recorder, 2)
        await until(lambda: len(recorder.started) >= 20)
        b = await jobs.enqueue("deliver", push("TB", "daily"), job_id=jobs.job_id("deliver", "TB", "daily"))
        mark = len(recorder.started)  # B is queued (and indexed) from here on
        await until(lambda: b.job_id in recorder.started)
        a_before_b = recorder.started[mark : recorder.started.index(b.job_id)]
        assert len(a_before_b) <= 2 * SLOTS, f"B's push waited for {len(a_before_b)} of A's jobs"
        await until(lambda: len(recorder.started) == 201)
        await settled(jobs)
        assert sorted(recorder.started) == sorted([*burst, b.job_id])  # nothing lost, nothing doubled
    finally:
        for worker in running:
            await worker.close()
        await jobs.close()


async def test_one_workspace_alone_uses_every_slot(make_settings):
    """Fairness takes nothing from a workspace that is the only one busy: its burst fills every
    slot of every worker."""
    settings = make_settings(worker_max_jobs=SLOTS)
    jobs = await Jobs.connect(settings)
    recorder = Recorder(hold=0.01, full=asyncio.Event(), full_at=2 * SLOTS)
    running: list[JobWorker] = []
    try:
        burst = [(await jobs.enqueue("request", "message", conv("TA"), {"text": f"q{i}"})).job_id for i in range(40)]
        running = await workers(settings, recorder, 2)
        await until(lambda: len(recorder.started) == 40)
        await settled(jobs)
        assert recorder.peak == 2 * SLOTS
        assert sorted(recorder.started) == sorted(burst)
    finally:
        for worker in running:
            await worker.close()
        await jobs.close()


async def test_queued_positions_count_the_fair_order(make_settings):
    """With no worker free, each asker is told the position its job then starts at: B's one
    question is second, not behind A's ten."""
    settings = make_settings(worker_max_jobs=1)
    jobs = await Jobs.connect(settings)
    recorder = Recorder(hold=0)
    running: list[JobWorker] = []
    try:
        ids = [(await jobs.enqueue("request", "message", conv("TA"), {"i": i})).job_id for i in range(10)]
        ids.append((await jobs.enqueue("request", "message", conv("TB"), {"i": 10})).job_id)
        ids.append((await jobs.enqueue("request", "message", conv("TA"), {"i": 11})).job_id)
        told = {job_id: await jobs.position(job_id) for job_id in ids}
        assert told[ids[10]] == 2  # B's
        assert sorted(told.values()) == list(range(1, 13))
        running = await workers(settings, recorder, 1)
        await until(lambda: len(recorder.started) == 12)
        await settled(jobs)
        assert recorder.started == sorted(ids, key=told.__getitem__)  # they started where they were told
    finally:
        for worker in running:
            await worker.close()
        await jobs.close()


async def test_a_killed_worker_frees_its_workspace_slots(make_settings, redis_url, tmp_path):
    """A worker process running four of B's jobs is killed. Its jobs run again elsewhere, once each,
    and B's slots come back: B's next push is not left behind A's burst as if B still held four
    slots (nor behind the burst at all, as oldest-first would)."""
    lease = 1.0
    settings = make_settings(worker_max_jobs=2, job_lease=lease)
    jobs = await Jobs.connect(settings)
    recorder = Recorder(hold=0.02)
    running: list[JobWorker] = []
    doomed = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "tests.shared.fair_jobs", redis_url, settings.redis_prefix, "4", str(lease)),
        str(tmp_path),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.DEVNULL,
    )
    try:
        crashed = [(await jobs.enqueue("request", "message", conv("TB"), {"i": i})).job_id for i in range(4)]

        async def in_progress() -> int:
            return int(await jobs.pool.exists(*(in_progress_key_prefix + j for j in crashed)))

        for _ in range(6000):  # until the doomed worker runs all four (a hang guard, as `until`)
            if await in_progress() == 4:
                break
            await asyncio.sleep(0.01)
        assert await in_progress() == 4
        doomed.send_signal(signal.SIGKILL)  # no cleanup: its jobs' marks and slots are left behind
        await doomed.wait()

        burst = [(await jobs.enqueue("request", "message", conv("TA"), {"i": i})).job_id for i in range(40)]
        b = await jobs.enqueue("deliver", push("TB", "daily"), job_id=jobs.job_id("deliver", "TB", "daily"))
        for _ in range(6000):  # the dead worker's marks lapse within its lease
            if await in_progress() == 0:
                break
            await asyncio.sleep(0.01)
        running = await workers(settings, recorder, 1)
        await until(lambda: len(recorder.started) == 45)
        await settled(jobs)
        assert sorted(recorder.started) == sorted([*crashed, *burst, b.job_id])  # each once
        a_before_b = [j for j in recorder.started[: recorder.started.index(b.job_id)] if j in burst]
        assert len(a_before_b) <= 2 * 4, f"B's push waited for {len(a_before_b)} of A's jobs"
    finally:
        if doomed.returncode is None:
            doomed.kill()
            await doomed.wait()
        for worker in running:
            await worker.close()
        await jobs.close()

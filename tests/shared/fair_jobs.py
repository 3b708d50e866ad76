"""Jobs of several workspaces for the queue's fairness (tests/test_fairness.py, bench/bench_fairness.py).

`Recorder` is a JobRunner (the worker's entry points) that runs no digest: each job notes when it
started and holds its slot for `hold` seconds, so what is measured is the queue's order alone.
Run as a module it is a job worker whose jobs never end — a process to kill mid-job:

  python -m tests.shared.fair_jobs REDIS_URL PREFIX SLOTS LEASE DATA_DIR
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field


def conv(workspace: str, channel: str = "C0001") -> dict:
    """A request's conversation in a workspace of a Slack bot installed into several."""
    return {"platform": "slack", "channel": f"{workspace}/{channel}"}


def push(workspace: str, key: str, channel: str = "C0009") -> dict:
    """A scheduled delivery's spec as the clock enqueues it (only what the queue reads matters)."""
    return {"platform": "slack", "channel": f"{workspace}/{channel}", "key": key}


@dataclass
class Recorder:
    hold: float = 0.02
    started: list[str] = field(default_factory=list)  # job ids, in the order they started
    at: dict[str, float] = field(default_factory=dict)  # job id → monotonic start time
    running: int = 0
    peak: int = 0
    full: asyncio.Event | None = None  # set once `full_at` jobs run at once (jobs wait for it)
    full_at: int = 0

    async def _run(self, job_id: str | None) -> str:
        assert job_id is not None
        self.started.append(job_id)
        self.at.setdefault(job_id, time.monotonic())
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if self.full is not None:
                if self.running >= self.full_at:
                    self.full.set()
                await asyncio.wait_for(self.full.wait(), 30)  # a guard against a hang, not a timing
            await asyncio.sleep(self.hold)
        finally:
            self.running -= 1
        return "done"

    async def run_request(self, kind: str, conv: dict, args: dict, job_id: str | None = None) -> None:
        await self._run(job_id)

    async def run_delivery(self, spec: dict, job_id: str | None = None) -> str:
        return await self._run(job_id)

    async def run_build(self, spec: dict) -> str:
        return "built"

    async def run_improve(self, key: str) -> str:
        return "improved"

    async def run_watch(self, spec: dict) -> str:
        return "sent 0"

    async def run_alert(self, spec: dict) -> str:
        return "sent 0"


async def _hang_forever(url: str, prefix: str, slots: int, lease: float, data_dir: str) -> None:
    from bot.runtime.queue import JobWorker
    from settings import Settings

    settings = Settings(
        _env_file=None, redis_url=url, redis_prefix=prefix, data_dir=data_dir, worker_max_jobs=slots, job_lease=lease
    )
    worker = JobWorker(settings, Recorder(hold=3600))
    await worker.start()
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    url, prefix, slots, lease, data_dir = sys.argv[1:6]
    asyncio.run(_hang_forever(url, prefix, int(slots), float(lease), data_dir))

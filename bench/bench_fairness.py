"""Fairness between workspaces in the job queue (issue 35 §4): prints figures; asserts nothing.

  python bench/bench_fairness.py [--burst 400] [--hold 0.2] [--workers 2] [--slots 8]

Workspace A floods the queue with `--burst` questions at once (each job holds its worker slot for
`--hold` seconds); once the workers are busy with it, workspace B's scheduled push is queued.
Two job workers share a real redis-server (loopback); the jobs run no digest
(tests/shared/fair_jobs.py), so what is measured is the queue alone. Each scenario runs with
fairness (the default) and without it (`JobWorker(fair=False)`: arq's oldest first):

  B's wait     how many of A's jobs started between B's push being queued and its start, and
               the seconds between
  throughput   the wall time of A's whole burst ÷ the ideal ⌈burst ÷ slots⌉ × hold, with B's
               push in it, and with A alone (the single-tenant case: fairness must cost nothing)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.runtime.queue import Jobs, JobWorker  # noqa: E402
from settings import Settings  # noqa: E402
from tests.shared.fair_jobs import Recorder, conv, push  # noqa: E402
from tests.shared.redis_proc import RedisProcess, free_port  # noqa: E402


async def scenario(url: str, tmp: Path, name: str, args, fair: bool, with_b: bool) -> dict:
    settings = Settings(
        _env_file=None,
        redis_url=url,
        redis_prefix=f"bfair{name}:",
        data_dir=tmp / name,
        worker_max_jobs=args.slots,
        log_level="WARNING",
    )
    jobs = await Jobs.connect(settings)
    recorder = Recorder(hold=args.hold)
    workers = [JobWorker(settings, recorder, fair=fair) for _ in range(args.workers)]
    try:
        burst = [
            (await jobs.enqueue("request", "message", conv("TA"), {"text": f"q{i}"})).job_id for i in range(args.burst)
        ]
        began = time.monotonic()
        for worker in workers:
            await worker.start()
        out: dict = {}
        if with_b:
            while len(recorder.started) < 2 * args.slots * args.workers:  # A holds every slot
                await asyncio.sleep(0.005)
            queued_at = time.monotonic()
            b = await jobs.enqueue("deliver", push("TB", "daily"), job_id=jobs.job_id("deliver", "TB", "daily"))
            mark = len(recorder.started)
            while b.job_id not in recorder.started:
                await asyncio.sleep(0.005)
            out["b_jobs"] = len(recorder.started[mark : recorder.started.index(b.job_id)])
            out["b_seconds"] = recorder.at[b.job_id] - queued_at
        while len(recorder.started) < len(burst) + with_b or recorder.running:
            await asyncio.sleep(0.005)
        out["wall"] = time.monotonic() - began
        while await jobs.pending():
            await asyncio.sleep(0.005)
        ideal = math.ceil((len(burst) + with_b) / (args.slots * args.workers)) * args.hold
        out["ratio"] = out["wall"] / ideal
        out["doubled"] = len(recorder.started) - len(set(recorder.started))
        return out
    finally:
        for worker in workers:
            await worker.close()
        await jobs.close()


async def main(args) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server = RedisProcess(free_port(), tmp)
        server.start()
        url = f"redis://127.0.0.1:{server.port}/0"
        try:
            print(
                f"A: {args.burst} jobs of {args.hold:.2f} s; {args.workers} workers × {args.slots} slots; "
                "B: one scheduled push queued once A holds every slot"
            )
            print(f"{'':14} {'B waited (A jobs)':>18} {'B waited (s)':>13} {'burst ÷ ideal':>14}")
            for fair in (True, False):
                label = "fair" if fair else "oldest first"
                both = await scenario(url, tmp, f"{int(fair)}b", args, fair, with_b=True)
                alone = await scenario(url, tmp, f"{int(fair)}a", args, fair, with_b=False)
                print(
                    f"{label:14} {both['b_jobs']:>18} {both['b_seconds']:>13.2f} "
                    f"{both['ratio']:>14.2f}   (A alone: {alone['ratio']:.2f}; doubled starts: "
                    f"{both['doubled'] + alone['doubled']})"
                )
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=400)
    parser.add_argument("--hold", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slots", type=int, default=8)
    asyncio.run(main(parser.parse_args()))

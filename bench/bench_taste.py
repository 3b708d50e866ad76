"""How long one learned profile takes: read 2,000 commits of history and the release notes, label,
fit (bot/taste), against the 10-second budget; and what a digest pays per commit to be judged.

  python bench/bench_taste.py --repo PATH [--date 2026-04-15] [--runs 5]

Prints the wall and CPU time of each stage (median of the runs) and the ratio to the budget.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.sources.localgit import LocalGitSource
from bot.taste.book import HISTORY_LIMIT, epoch, label_as_of
from bot.taste.model import LearnedProfile

BUDGET = 10.0  # seconds, the bound for 2,000 commits


async def run(repo: str, day: datetime, runs: int) -> int:
    source = LocalGitSource(repo)
    as_of = epoch(day)
    label_wall, fit_wall, cpu, judge = [], [], [], []
    LearnedProfile  # noqa: B018 — the scikit-learn import is paid below, once, as a process pays it
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        examples, verdict = await label_as_of(source, as_of, None, HISTORY_LIMIT)
        t1 = time.perf_counter()
        profile = LearnedProfile(examples)
        t2 = time.perf_counter()
        cpu.append(time.process_time() - c0)
        label_wall.append(t1 - t0)
        fit_wall.append(t2 - t1)
        history = await source.history(await source.tip_before(as_of), 300)
        t3 = time.perf_counter()
        for c in history:
            profile.judge(c.title, c.paths, c.added)
        judge.append((time.perf_counter() - t3) / len(history))
    total = [a + b for a, b in zip(label_wall, fit_wall)]
    print(
        f"repository {source.name}, profile as of {as_of.date()}: {verdict.kind}, {len(examples)} labelled "
        f"of {HISTORY_LIMIT} read"
    )
    print(
        f"read + label: {statistics.median(label_wall):.2f} s   fit: {statistics.median(fit_wall):.2f} s   "
        f"total wall {statistics.median(total):.2f} s (CPU {statistics.median(cpu):.2f} s)"
    )
    print(f"ratio to the {BUDGET:.0f} s budget: {statistics.median(total) / BUDGET:.2f}")
    print(f"judging one commit: {statistics.median(judge) * 1000:.2f} ms")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--date", default="2026-04-15")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    day = datetime.fromisoformat(args.date).replace(tzinfo=UTC)
    return asyncio.run(run(args.repo, day, args.runs))


if __name__ == "__main__":
    sys.exit(main())

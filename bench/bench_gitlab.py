"""A GitLab day of 100 commits through the fake GitLab (tests/fakes/gitlab_server.py) and the real
python-gitlab: requests made and wall time, against the ideal.

    .venv/bin/python bench/bench_gitlab.py [--latency 0.02]

The ideal, in requests: the project (1), the day's commits (1 page of 100), the merged merge
requests of the day (1 page), one diff per commit (100) — 103; each MR closing an issue adds its
`closes_issues` (this day has none). In time: every request costs the fake's latency L; the first
three are sequential, the 100 diffs run GITLAB_FETCH_CONCURRENCY (8) at a time: (3 + ⌈100/8⌉)·L.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.window import day_window
from bot.sources.opened import open_source
from settings import Settings
from tests.fakes.gitlab_server import FakeDiff, FakeGitLab

PROJECT, N, CONCURRENCY = "acme/platform/api", 100, 8


async def main(latency: float) -> None:
    sh = ZoneInfo("Asia/Shanghai")
    with FakeGitLab() as gl, tempfile.TemporaryDirectory() as data:
        gl.add_project(PROJECT)
        start = datetime(2026, 1, 28, 8, tzinfo=sh)
        for i in range(N):
            sha = gl.add_commit(
                PROJECT, f"Change {i}", committed_at=start + timedelta(minutes=i), diffs=[FakeDiff(f"m{i}.py", lines=5)]
            )
            if i % 2 == 0:
                gl.add_merge_request(
                    PROJECT, i + 1, title=f"Change {i}", squash_commit_sha=sha, merged_at=start + timedelta(minutes=i)
                )
        gl.latency = latency
        settings = Settings(
            _env_file=None, gitlab_url=gl.url, gitlab_fetch_concurrency=CONCURRENCY, data_dir=Path(data)
        )
        source = open_source(f"gitlab:{PROJECT}", settings)
        began = time.perf_counter()
        commits = await source.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai"))
        await source.prefetch_prs(commits)
        await asyncio.gather(*(source.get_files(c.sha) for c in commits))
        wall = time.perf_counter() - began
        ideal_requests = 3 + N
        ideal_wall = (3 + math.ceil(N / CONCURRENCY)) * latency
        with_mr = sum(1 for c in commits if c.pr_number)
        print(f"commits {len(commits)} (with their MR: {with_mr})")
        print(f"requests {len(gl.requests)} (ideal {ideal_requests}): ratio {len(gl.requests) / ideal_requests:.2f}")
        print(
            f"wall {wall:.2f} s (ideal {ideal_wall:.2f} s at {latency * 1000:.0f} ms a request, {CONCURRENCY} at once): ratio {wall / ideal_wall:.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.02)
    asyncio.run(main(parser.parse_args().latency))

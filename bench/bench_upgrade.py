"""The upgrade report of a release range (issue 27): its wall time, cold and cached. Prints the
figures and their ratio to the ideal; asserts nothing.

  python bench/bench_upgrade.py                     # defaults: 60 commits, L = 0.2 s, C = 8
  python bench/bench_upgrade.py --commits 120 --latency 0.1 --concurrency 4

Everything is real except the LLM: a local git repository (tests/gitrepo.py `bulk_commits`) with
tag v1 before the N commits and v2 after them, the embedded Redis under a temporary DATA_DIR, the
builder, the areas and the report as `python -m bot digest --range v1..v2` makes them. The fake
LLM (tests/fakes/openai_server.py) answers every request after latency L, in a process of its own.

C is the LLM's concurrency, LLM_CONCURRENCY (ANALYSIS_CONCURRENCY, 32 by default, bounds the
commits in flight above it): the effective concurrency is the smaller of the two.

(a) cold: nothing cached — resolve the range, list its first-parent commits, analyse each, the
    headline, the areas, the upgrade report (Markdown). Ideal: (⌈N/C⌉ + 1) × L (the +1 is the
    headline, which needs every analysis first). Printed: wall ÷ ideal, LLM calls.
(b) cached: the same range again (the range's digest is kept: its SHAs never change). Printed: the
    wall time and the LLM calls it made (should be 0), and its ratio to the cold run.
(c) after the daily digests: a fresh Redis, the day's digest first (N analyses), then the range:
    the range's LLM calls (should be 1: its headline; every analysis is reused).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import sys
import tempfile
import time
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_speed import LLMProcess  # noqa: E402
from bot.core.window import day_window  # noqa: E402
from bot.digest.rollup import areas_of  # noqa: E402
from bot.render.markdown import render_report  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from bot.sources.refrange import range_window  # noqa: E402
from settings import Settings  # noqa: E402
from tests.gitrepo import GitRepo, bulk_commits  # noqa: E402

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 20)
KEY = "bench-key-0000"


def make_repo(path: Path, n: int) -> GitRepo:
    repo = GitRepo(path)
    repo.commit("init", {"README.md": "hi\n"}, when=datetime(2026, 1, 19, 9, 0, tzinfo=SH))
    repo.git("tag", "v1")
    bulk_commits(repo, n, datetime(2026, 1, 20, 9, 0, tzinfo=SH), step_seconds=300)
    repo.git("tag", "v2")
    return repo


def settings_for(data_dir: Path, prefix: str, llm_url: str, concurrency: int) -> Settings:
    return Settings(
        _env_file=None,
        data_dir=data_dir,
        redis_prefix=prefix,
        openai_base_url=llm_url,
        openai_api_key=KEY,
        llm_concurrency=concurrency,
        default_lang="en",
        log_level="WARNING",
    )


async def upgrade(services: Services, repo: Path) -> tuple[float, int, str]:
    """(wall seconds, commits, the report) of `digest --range v1..v2` as the CLI builds it."""
    start = time.perf_counter()
    source = services.source(str(repo))
    window = await range_window(source, "v1..v2", "Asia/Shanghai")
    digest = await services.builder.build(source, window, "en")
    areas = await areas_of(services.builder, source, list(digest.entries))
    report = render_report([digest], areas)
    return time.perf_counter() - start, len(digest.entries), report


async def main(n: int, latency: float, concurrency: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-upgrade-"))
    try:
        repo = make_repo(tmp / "repo", n).path
        with LLMProcess(latency=latency) as llm:
            services = Services.build(settings_for(tmp / "data", "benchup:", llm.url, concurrency))
            c = min(concurrency, services.settings.analysis_concurrency)
            try:
                calls = llm.count()
                cold, listed, report = await upgrade(services, repo)
                cold_calls = llm.count() - calls
                calls = llm.count()
                warm, _, again = await upgrade(services, repo)
                warm_calls = llm.count() - calls
            finally:
                await services.aclose()
            same = report.count("\n#### ") == again.count("\n#### ")  # the cost line differs: "reused"
            ideal = (math.ceil(listed / c) + 1) * latency
            print(
                f"(a) cold upgrade report, {listed} commits, L={latency} s, C={c}: wall {cold:.2f} s · "
                f"ideal (⌈N/C⌉+1)×L {ideal:.2f} s · ratio {cold / ideal:.2f} · {cold_calls} LLM calls"
            )
            print(
                f"(b) cached (second run): wall {warm:.3f} s · {warm_calls} LLM calls · "
                f"cached ÷ cold {warm / cold:.3f} · ÷ ideal {warm / ideal:.3f} · same report: {same}"
            )
            services = Services.build(settings_for(tmp / "data2", "benchup2:", llm.url, concurrency))
            try:
                calls = llm.count()
                await services.builder.build(services.source(str(repo)), day_window(DAY, "Asia/Shanghai"), "en")
                daily = llm.count() - calls
                calls = llm.count()
                after, _, _ = await upgrade(services, repo)
                ranged = llm.count() - calls
            finally:
                await services.aclose()
            print(
                f"(c) after the day's digest ({daily} LLM calls): the range {after:.2f} s · {ranged} LLM calls "
                "(its headline; every analysis reused)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=60, help="commits in the range (N)")
    parser.add_argument("--latency", type=float, default=0.2, help="fake LLM latency L, seconds")
    parser.add_argument("--concurrency", type=int, default=8, help="LLM_CONCURRENCY (C)")
    args = parser.parse_args()
    os.environ.pop("REDIS_URL", None)  # the embedded Redis under the temporary DATA_DIR
    asyncio.run(main(args.commits, args.latency, args.concurrency))

"""Digest engine benchmarks: prints figures and ratios against the ideal; asserts nothing.

  python bench/bench_digest.py

1. 30 commits of a realistic day (bench/realistic_day.py: ruff's diff sizes, one large commit) on
   the fake GitHub, a fake LLM with 0.5 s latency and a server-side cap of 8 concurrent requests
   (LLM_CONCURRENCY=8): wall time ÷ (⌈30/8⌉ × 0.5 s). The day's headline is one more LLM call
   that needs every analysis first, so the figure is also shown against (⌈30/8⌉ + 1) × 0.5 s.
2. Re-running the same day: LLM calls and GitHub requests made, and wall time — in the same
   process, and in a fresh process (new clients, same Redis) measured after its start-up.
3. Prompt size per commit on a generated 500-file commit: the estimated tokens of the request the
   LLM really received, against LLM_MAX_PROMPT_TOKENS.
4. `python -m bot --help` cold start (median of 5).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.realistic_day import github_files, make_day  # noqa: E402
from bot.core.window import day_window  # noqa: E402
from bot.diffs import estimate_tokens  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from settings import Settings  # noqa: E402
from tests.fakes.github_server import FakeFile, FakeGitHub  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

SH = ZoneInfo("Asia/Shanghai")
REPO = "bench/widgets"
DAY = date(2026, 1, 28)
LATENCY, CAP, N = 0.5, 8, 30


def add_day(fake: FakeGitHub, n: int) -> None:
    """A realistic day (bench/realistic_day.py: ruff's diff sizes, one large commit) on the fake
    GitHub, patches as GitHub sends them."""
    fake.add_repo(REPO)
    first = datetime(2026, 1, 28, 1, tzinfo=SH)
    for commit in make_day(n, first, 22 * 3600 // n, large=1, seed=7).commits:
        fake.add_commit(REPO, commit.message, committed_at=commit.when, files=github_files(commit))


def settings_for(gh: FakeGitHub, llm: FakeOpenAI, data_dir: str, prefix: str) -> Settings:
    return Settings(
        _env_file=None,
        github_api_url=gh.url,
        openai_base_url=llm.url,
        openai_api_key="bench-key-0000",
        llm_concurrency=CAP,
        data_dir=Path(data_dir),
        redis_prefix=prefix,
        llm_max_retries=2,
    )


async def bench_parallel(gh, llm, data_dir) -> None:
    later = lambda: datetime(2026, 2, 1, tzinfo=UTC)  # noqa: E731
    s = Services.build(settings_for(gh, llm, data_dir, "bench1:"), clock=later)
    window = day_window(DAY, "Asia/Shanghai")
    ideal = math.ceil(N / CAP) * LATENCY
    # The first digest of a process also pays for opening connections; the second (another
    # language, so nothing is cached) is what a running bot sees.
    for label, lang in (("cold process", "en"), ("warm process", "zh")):
        before = len(llm.requests)
        start = time.perf_counter()
        digest = await s.builder.build(s.source(REPO), window, lang)
        wall = time.perf_counter() - start
        origins = {e.analysis.origin for e in digest.entries}
        print(
            f"[1] {label}: {len(digest.entries)} commits analysed ({', '.join(sorted(origins))}), "
            f"{len(llm.requests) - before} LLM calls, peak LLM concurrency {llm.peak_concurrency} (cap {CAP})"
        )
        print(
            f"    wall {wall:.2f} s; ideal ⌈{N}/{CAP}⌉×{LATENCY} = {ideal:.2f} s → ratio {wall / ideal:.2f} "
            f"(target ≤ 1.2); counting the headline call, which needs every analysis first: ideal "
            f"{ideal + LATENCY:.2f} s → ratio {wall / (ideal + LATENCY):.2f}"
        )

    calls, requests = len(llm.requests), len(gh.requests)
    start = time.perf_counter()
    await s.builder.build(s.source(REPO), window, "zh")
    again = time.perf_counter() - start
    print(
        f"[2] re-run, same process: {len(llm.requests) - calls} LLM calls (target 0), "
        f"{len(gh.requests) - requests} GitHub requests, {again * 1000:.1f} ms (target < 1 s)"
    )
    await s.aclose()


def bench_fresh_process(gh, llm, data_dir) -> None:
    code = (
        "import asyncio, sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from datetime import date, datetime, timezone\n"
        "from pathlib import Path\n"
        "from bot.runtime.services import Services\nfrom bot.core.window import day_window\nfrom settings import Settings\n"
        "async def main():\n"
        f"    s = Services.build(Settings(_env_file=None, github_api_url={gh.url!r}, openai_base_url={llm.url!r},"
        f" openai_api_key='bench-key-0000', llm_concurrency={CAP}, data_dir=Path({data_dir!r}), redis_prefix='bench1:'),"
        " clock=lambda: datetime(2026, 2, 1, tzinfo=timezone.utc))\n"
        "    t = time.perf_counter()\n"
        f"    await s.builder.build(s.source({REPO!r}), day_window(date(2026, 1, 28), 'Asia/Shanghai'), 'zh')\n"
        "    print(f'{(time.perf_counter() - t) * 1000:.1f}')\n"
        "    await s.aclose()\n"
        "asyncio.run(main())\n"
    )
    calls, requests = len(llm.requests), len(gh.requests)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    total = time.perf_counter() - start
    print(
        f"    re-run, fresh process: {len(llm.requests) - calls} LLM calls, {len(gh.requests) - requests} GitHub "
        f"requests, {out.stdout.strip()} ms after start-up (process total {total:.2f} s)"
    )


async def bench_prompt_budget(data_dir) -> None:
    rng = random.Random(11)
    with FakeGitHub() as gh, FakeOpenAI() as llm:
        gh.add_repo(REPO)
        kinds = ["src/core/m{}.py", "tests/test_m{}.py", "docs/p{}.md", "config/c{}.yaml", "web/v{}.ts"]
        files = [
            FakeFile(rng.choice(kinds).format(i), additions=rng.randint(1, 400), deletions=rng.randint(0, 100))
            for i in range(500)
        ]
        files += [FakeFile("poetry.lock", additions=4000), FakeFile("logo.png", additions=0, patch=None)]
        gh.add_commit(
            REPO, "[Refactor] touch 500 files (#9)", committed_at=datetime(2026, 1, 28, 9, tzinfo=SH), files=files
        )
        for budget in (12000, 6000, 3000):
            s = Services.build(
                Settings(
                    _env_file=None,
                    github_api_url=gh.url,
                    openai_base_url=llm.url,
                    openai_api_key="bench-key-0000",
                    data_dir=Path(data_dir),
                    redis_prefix=f"bench3-{budget}:",
                    llm_max_prompt_tokens=budget,
                )
            )
            before = len(llm.requests)
            digest = await s.builder.build(s.source(REPO), day_window(DAY, "Asia/Shanghai"), "zh")
            sent = [r for r in llm.requests[before:] if "touch 500 files" in r["messages"][-1]["content"]]
            tokens = max(estimate_tokens("\n".join(m["content"] for m in r["messages"])) for r in sent)
            cov = digest.entries[0].analysis.coverage
            print(
                f"[3] 502-file commit, budget {budget}: prompt ≈ {tokens} tokens ({tokens / budget:.2f} of budget, "
                f"target ≤ 1.00); {cov.files_shown}/{cov.files_total} files shown, {len(cov.omitted)} named as left out"
            )
            await s.aclose()


def bench_help() -> None:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot", "--help"], capture_output=True, check=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
    bare = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True)
        bare.append(time.perf_counter() - start)
    print(
        f"[4] python -m bot --help: median {statistics.median(times) * 1000:.0f} ms "
        f"(bare interpreter start {statistics.median(bare) * 1000:.0f} ms)"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        with FakeGitHub() as gh, FakeOpenAI(latency=LATENCY, max_concurrent=CAP) as llm:
            add_day(gh, N)
            await bench_parallel(gh, llm, data_dir)
            bench_fresh_process(gh, llm, data_dir)
        await bench_prompt_budget(data_dir)
    bench_help()


if __name__ == "__main__":
    os.environ.pop("REDIS_URL", None)
    asyncio.run(main())

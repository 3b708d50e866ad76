"""The LLM path against endpoints that behave like those met in the wild; prints figures and
ratios against the ideal, asserts nothing.

  python bench/bench_llm_endpoints.py [--commits 27] [--timeout 2] [--concurrency 8]

A generated 27-commit day (source, docs-only, tests-only, a few big commits with Chinese comments)
on a fake GitHub, digested through the real services once per endpoint behaviour of
tests/fakes/openai_server.py (`BEHAVIOURS`):

1. LLM analyses ÷ commits, per behaviour (target 1.0 except "echo" — placeholders copied back,
   rightly refused — and "hang").
2. Under "hang": requests per LLM call (target ≤ 2: one retry of a timeout at most), and the wall
   time of the all-hang day ÷ (timeout × 2 × ⌈N/C⌉) (target ≤ 1.2: the breaker sends the rest of
   the day offline instead of waiting out every commit).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import random
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.services import Services  # noqa: E402
from bot.window import day_window  # noqa: E402
from settings import Settings  # noqa: E402
from tests.fakes.github_server import FakeFile, FakeGitHub  # noqa: E402
from tests.fakes.openai_server import BEHAVIOURS, Behaviour, FakeOpenAI  # noqa: E402

SH = ZoneInfo("Asia/Shanghai")
REPO = "bench/endpoints"
DAY = date(2026, 1, 28)
LATER = lambda: datetime(2026, 2, 1, tzinfo=timezone.utc)  # noqa: E731


def source_patch(name: str, lines: int, zh: bool) -> str:
    comment = "  # 解析这一列并检查边界" if zh else "  # parse this column and check bounds"
    body = "\n".join(f"+    {name}_{i} = parse_column(row, {i}){comment}" for i in range(lines))
    return f"@@ -1,0 +1,{lines} @@\n{body}"


def add_day(fake: FakeGitHub, n: int) -> None:
    rng = random.Random(11)
    fake.add_repo(REPO)
    for i in range(n):
        kind = i % 9
        if kind == 0:
            files = [FakeFile(f"docs/guide_{i}.md", additions=12, deletions=3)]
            title = f"docs: explain option {i}"
        elif kind == 1:
            files = [FakeFile(f"tests/test_option_{i}.py", additions=40, deletions=2)]
            title = f"test: cover option {i}"
        elif kind == 2:  # the day's big ones: over a 6,144-token window with Chinese comments
            lines = rng.randint(500, 900)
            files = [FakeFile(f"crates/resolver/src/pass_{i}.rs", additions=lines, deletions=0,
                              patch=source_patch(f"pass{i}", lines, zh=True))]
            title = f"perf: rewrite resolver pass {i}"
        else:
            files = [FakeFile(f"crates/cli/src/cmd_{i}_{j}.rs", additions=rng.randint(5, 80),
                              deletions=rng.randint(0, 20)) for j in range(rng.randint(1, 4))]
            title = f"feat: add --flag-{i} to the cli"
        fake.add_commit(REPO, title, committed_at=datetime(2026, 1, 28, 1 + i * 22 // n, i % 60, tzinfo=SH),
                        files=files)


async def one_day(gh: FakeGitHub, behaviour: str, args, data_dir: str) -> dict:
    played = Behaviour(behaviour)
    with FakeOpenAI(played) as llm:
        settings = Settings(_env_file=None, github_api_url=gh.url, openai_base_url=llm.url,
                            openai_api_key="sk-bench-endpoints", llm_concurrency=args.concurrency,
                            llm_timeout=args.timeout, llm_max_retries=2, data_dir=Path(data_dir),
                            redis_prefix=f"bench-ep-{behaviour}-{time.time_ns()}:")
        services = Services.build(settings, clock=LATER)
        try:
            started = time.monotonic()
            digest = await services.builder.build(services.source(REPO), day_window(DAY, "Asia/Shanghai"), "en")
            wall = time.monotonic() - started
        finally:
            await services.aclose()
        calls = len({json.dumps(r["messages"]) for r in llm.requests})
        return {"llm": sum(1 for e in digest.entries if e.analysis and e.analysis.origin == "llm"),
                "n": len(digest.entries), "requests": len(llm.requests), "calls": calls, "wall": wall,
                "notices": digest.notices}


async def main(args) -> None:
    logging.disable(logging.WARNING)  # every fallback logs a line; the table says it all
    with FakeGitHub() as gh, tempfile.TemporaryDirectory() as data_dir:
        add_day(gh, args.commits)
        print(f"{args.commits}-commit day, LLM_CONCURRENCY={args.concurrency}, LLM_TIMEOUT={args.timeout:g} s")
        print(f"{'behaviour':<14} {'LLM analyses ÷ commits':>24} {'requests':>9} {'wall':>7}")
        for behaviour in BEHAVIOURS:
            r = await one_day(gh, behaviour, args, data_dir)
            target = "(target 0: refused)" if behaviour == "echo" else "" if behaviour == "hang" else "(target 1.0)"
            print(f"{behaviour:<14} {r['llm']:>3}/{r['n']:<3} = {r['llm'] / r['n']:>5.2f} {target:<20}"
                  f"{r['requests']:>6} {r['wall']:>6.1f}s")
            if behaviour == "hang":
                hang = r
        ideal = args.timeout * 2 * math.ceil(args.commits / args.concurrency)
        print(f"hang: {hang['requests']} requests for {hang['calls']} calls = "
              f"{hang['requests'] / max(hang['calls'], 1):.2f} per call (target ≤ 2); the rest skipped by the breaker")
        print(f"hang: all-hang day {hang['wall']:.1f} s ÷ (timeout × 2 × ⌈N/C⌉ = {ideal:g} s) = "
              f"{hang['wall'] / ideal:.2f} (target ≤ 1.2)")
        print(f"hang: notice: {hang['notices'][0] if hang['notices'] else '(none)'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=27)
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=8)
    asyncio.run(main(parser.parse_args()))

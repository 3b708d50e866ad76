"""What a digest costs in LLM tokens, on real astral-sh/uv days through the fake endpoint; prints
figures, asserts nothing.

  python bench/bench_cost.py --mirror DIR [--days 2026-01-13,2026-01-14,2026-01-16,2026-01-20]
                             [--range 2026-07-01..2026-07-31] [--glob 'crates/uv-resolver/**']

`--mirror DIR` (or DIGEST_BENCH_UV_MIRROR) is a bare clone of astral-sh/uv, read at run time;
without one the script says so and exits 0. Each day (UTC) is digested through the real services
(real Redis, the repository's own history, the prompts, the diff budget) against the fake
OpenAI-compatible endpoint of tests/fakes/openai_server.py, which counts prompts as
llama-cpp-python counted Qwen2.5-Coder's (`measured_tokens`: 0.73–0.81 of the local estimate)
and answers every analysis with a short valid answer (`good_answer`) and the headline with three
bullets. Printed per day:

1. tokens per digest (in / out), per commit, LLM requests — the line the digest's parent shows;
2. the same digest again (warm cache): tokens spent (target 0);
3. a watch of `--glob` on that day after the digest: matching commits, LLM requests (target 0);
4. for `--range` (31 days by default): how many commits one `/digest` of it would analyse, and
   what REQUEST_MAX_COMMITS (500) answers instead, counted from the listing alone.

Completion tokens are the fake's (a compact answer, ~150 tokens): a real model writes 200–800
(README, "LLM endpoints"), so the "out" figures are a floor; the "in" figures are what the bot
sends, counted like a real server counts them.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.core.window import day_window, parse_window  # noqa: E402
from bot.digest.pathfilter import PathFilter, touched_paths  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from settings import Settings  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, good_answer, headline_json, measured_tokens  # noqa: E402

PRICE_IN, PRICE_OUT = 0.15, 0.60  # US dollars per million tokens, for illustration (gpt-4o-mini's list price)


def _answer(request: dict) -> str:
    """A valid analysis naming the commit it was shown, or the day's headline."""
    system = next((m.get("content") or "" for m in request["messages"] if m.get("role") == "system"), "")
    return headline_json() if '"bullets"' in system else good_answer(request)


def _settings(url: str, data_dir: str, **extra) -> Settings:
    return Settings(
        _env_file=None,
        openai_base_url=url,
        openai_api_key="bench-key-cost",
        llm_timeout=30,
        llm_max_retries=1,
        data_dir=Path(data_dir),
        redis_prefix=f"bench-cost-{time.time_ns()}:",
        llm_price_per_mtok_in=PRICE_IN,
        llm_price_per_mtok_out=PRICE_OUT,
        **extra,
    )


async def main(args) -> None:
    logging.disable(logging.WARNING)
    mirror = args.mirror or os.environ.get("DIGEST_BENCH_UV_MIRROR")
    if not mirror or not Path(mirror).is_dir():
        print("no uv mirror: pass --mirror DIR (a bare clone of astral-sh/uv) or set DIGEST_BENCH_UV_MIRROR")
        return
    days = [date.fromisoformat(d) for d in args.days.split(",")]
    totals = {"commits": 0, "tokens": 0, "requests": 0}
    with tempfile.TemporaryDirectory() as data_dir, FakeOpenAI(_answer, tokens=measured_tokens) as fake:
        services = Services.build(_settings(fake.url, data_dir))
        try:
            source = services.source(mirror)
            print(f"uv days (UTC) {', '.join(map(str, days))}; prices ${PRICE_IN}/${PRICE_OUT} per million in/out")
            for day in days:
                window = day_window(day, "UTC")
                asked = len(fake.requests)
                digest = await services.builder.build(source, window, "en")
                cost, n = digest.cost, len(digest.entries)
                requests = len(fake.requests) - asked
                warm = await services.builder.build(source, window, "en")
                asked = len(fake.requests)
                matched = 0
                for e in digest.entries:  # a watch after the digest: the same cached path
                    if PathFilter(paths=(args.glob,)).keeps(
                        touched_paths(await services.builder.files(source, e.commit.sha))
                    ):
                        matched += 1
                        await services.builder.analysis(source, e.commit, "en", [x.commit for x in digest.entries])
                print(
                    f"  {day}: {n} commits, {requests} LLM requests; {cost.tokens:,} tokens per digest "
                    f"({cost.tokens_in:,} in / {cost.tokens_out:,} out, ${cost.money:.4f}), "
                    f"{cost.tokens / max(n, 1):,.0f} per commit; warm cache: {warm.cost.tokens} tokens "
                    f"({warm.cost.cached}/{warm.cost.analyses} cached); watch {args.glob}: {matched} commits, "
                    f"{len(fake.requests) - asked} LLM requests"
                )
                totals["commits"] += n
                totals["tokens"] += cost.tokens
                totals["requests"] += requests
            print(
                f"all days: {totals['commits']} commits, {totals['tokens']:,} tokens, "
                f"{totals['tokens'] / max(totals['commits'], 1):,.0f} tokens per commit, "
                f"{totals['requests']} LLM requests"
            )
            window = parse_window(args.range, "UTC", datetime.now(UTC), max_days=366)
            commits = await source.list_commits(window, await source.default_branch())
            per_commit = totals["tokens"] / max(totals["commits"], 1)
            print(
                f"range {window.label}: {len(commits)} commits → about {len(commits) + 1} LLM requests and "
                f"{per_commit * len(commits):,.0f} tokens uncapped; with REQUEST_MAX_COMMITS=500 "
                f"{'refused with one sentence, 0 requests' if len(commits) > 500 else 'allowed'}"
            )
        finally:
            await services.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", help="a bare clone of astral-sh/uv (else DIGEST_BENCH_UV_MIRROR)")
    parser.add_argument("--days", default="2026-01-13,2026-01-14,2026-01-16,2026-01-20")
    parser.add_argument("--range", default="2026-07-01..2026-07-31")
    parser.add_argument("--glob", default="crates/uv-resolver/**")
    asyncio.run(main(parser.parse_args()))

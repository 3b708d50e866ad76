"""Learning a repository's profile (bot/taste), and the first digest of a day with it: prints each
figure, its target and the ratio; asserts nothing.

  python bench/bench_taste.py --mirrors DIR [--repos astral-sh/ruff,pypa/pip,pytest-dev/pytest]

Fetched mirrors `DIR/<owner>+<name>/repo`, read as the bot reads a local clone (no GitHub). For
each repository:

(1) a full learn from 2,000 commits — the history, the release notes, labelling, the fit — in a
    fresh process, as the clock's process learns its first profile: the CPU (user + system) of
    the process and of the git commands it runs, importing what learning needs (scikit-learn)
    included. Target ≤ 2 s.
(2) the next day's, learnt from (1)'s state (reads what the branch gained; notes again only when
    a notes file changed): CPU in the same process. Target ≤ 2 s (it is a fraction of it).
    Also: judging one commit with the learnt weights (numpy, what every digest does).
(3) the first digest of a day (a real day of the mirror, Asia/Shanghai), a fake LLM answering after
    L = 0.5 s with C = 8 requests at a time, everything else real (Redis, git), each case in a
    process of its own that has made a digest before (of a small generated repository: imports
    and connections are warm, as in a bot that ran yesterday): wall time of the digest ÷ its
    ideal (⌈N/C⌉ + 1) × L (the +1: the headline).
      learnt ahead   the clock learnt the day's profiles after midnight: nothing to learn
      yesterday's    only the day before's profiles are learnt: the day is judged by them while its
                     own are learnt in the background (their CPU competes with the digest's)
      never learnt   a repository asked for the first time: the rules, and the profiles learnt
                     in the background
      on the path    what the bot did before issue 33: the day's profiles learnt, then the digest
    Target ≤ 1.3 for every case the bot runs now ("on the path" is the old behaviour, for scale).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DAYS = {  # a busy day of each, its commits' blobs all in the mirror
    "astral-sh/ruff": "2026-05-20",
    "pypa/pip": "2026-04-15",
    "pytest-dev/pytest": "2026-05-23",
}
LATENCY, CONCURRENCY, TZ = 0.5, 8, "Asia/Shanghai"


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def line(label: str, figure: float, target: float, unit: str, note: str = "") -> None:
    print(
        f"{label}: {figure:.2f} {unit} · target ≤ {target:.2f} {unit} · ratio {figure / target:.2f}"
        + (f"  ({note})" if note else "")
    )


# --- (1) and (2), in a fresh process ----------------------------------------------------------
async def learning(path: str, day: str) -> dict:
    start = cpu()
    from bot.sources.localgit import LocalGitSource
    from bot.taste.book import HISTORY_LIMIT
    from bot.taste.judge import Judge
    from bot.taste.learn import epoch, learn

    source = LocalGitSource(path)
    as_of = epoch(datetime.fromisoformat(day).replace(tzinfo=UTC))
    learned, state = await learn(source, as_of, None, HISTORY_LIMIT)
    full = cpu() - start
    start = cpu()
    nxt, _ = await learn(source, as_of + timedelta(days=1), None, HISTORY_LIMIT, state)
    step = cpu() - start
    judge = Judge(nxt.weights) if nxt.weights else None
    history = await source.history(await source.tip_before(as_of + timedelta(days=30)), 300)
    started = time.process_time()
    for c in history:
        if judge is not None:
            judge.judge(c.title, c.paths, c.added)
    judging = (time.process_time() - started) / len(history)
    return {
        "full": full,
        "step": step,
        "examples": learned.verdict.examples,
        "kind": learned.verdict.kind,
        "judge_ms": judging * 1000,
    }


# --- (3), in a fresh process each ---------------------------------------------------------------
async def first_digest(path: str, day: str, case: str, llm_url: str, data_dir: str) -> dict:
    from bot.core.window import day_window
    from bot.runtime.services import Services
    from settings import Settings

    settings = Settings(
        _env_file=None,
        data_dir=Path(data_dir),
        redis_prefix=f"benchtaste-{case}:",
        openai_base_url=llm_url,
        openai_api_key="bench-key-0000",
        llm_concurrency=CONCURRENCY,
        default_lang="en",
        log_level="WARNING",
    )
    services = Services.build(settings)
    taste = services.builder.taste
    source = services.source(path)
    window = day_window(date.fromisoformat(day), TZ)
    first, last = window.start_utc, window.end_utc - timedelta(seconds=1)
    try:
        await warm_up(services, Path(data_dir) / "warm")
        if case == "learnt ahead":
            await taste.learn_days(source, first, last)
        elif case == "yesterday's":
            await taste.learn_days(source, first - timedelta(days=1), first - timedelta(days=1))
        # what the day's last commits will be judged by (the digest's own look-up finds the same)
        used = None if case == "on the path" else (await taste.day(source, last)).as_of
        cpu_before, started = cpu(), time.perf_counter()
        if case == "on the path":
            await taste.learn_days(source, first, last)
        digest = await services.builder.build(source, window, "en")
        wall = time.perf_counter() - started
        spent = cpu() - cpu_before
        learn_started = time.perf_counter()
        await taste.settle()
        background = time.perf_counter() - learn_started
    finally:
        await services.aclose()
    return {
        "wall": wall,
        "cpu": spent,
        "n": len(digest.entries),
        "profile": used.date().isoformat() if used else "none (the rules)" if case != "on the path" else "the day's",
        "after": background,
    }


async def warm_up(services, path: Path) -> None:
    """A digest of a small generated repository: the process's imports, its Redis and LLM
    connections, as a bot has them after its first digest."""
    from bench.realistic_day import make_day, write_git
    from bot.core.window import day_window
    from tests.gitrepo import GitRepo

    repo = GitRepo(path)
    write_git(repo, make_day(3, datetime(2026, 1, 20, 3, tzinfo=UTC), 600, large=0))
    await services.builder.build(services.source(str(path)), day_window(date(2026, 1, 20), "UTC"), "en")
    await services.builder.taste.settle()


def child(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(args)], capture_output=True, text=True, cwd=ROOT
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, help="DIR holding <owner>+<name>/repo mirrors")
    parser.add_argument("--repos", default=",".join(DAYS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        from bench.bench_speed import use_the_bots_switch_interval

        use_the_bots_switch_interval()
        what, *rest = json.loads(args.child)
        result = asyncio.run(learning(*rest) if what == "learn" else first_digest(*rest))
        print(json.dumps(result))
        return 0
    if args.mirrors is None:
        print("bench_taste needs --mirrors DIR (fetched mirrors DIR/<owner>+<name>/repo); nothing measured")
        return 0
    from bench.bench_speed import LLMProcess

    for repo in args.repos.split(","):
        path = args.mirrors / repo.replace("/", "+") / "repo"
        if not path.exists():
            print(f"{repo}: no mirror under {args.mirrors}, skipped")
            continue
        day = DAYS.get(repo, "2026-05-20")
        print(f"\n{repo} ({path}), the day {day} ({TZ})")
        got = child(["learn", str(path), day])
        line(
            "(1) learning a profile from 2,000 commits, fresh process, CPU",
            got["full"],
            2.0,
            "s",
            note=f"{got['examples']} labelled, verdict {got['kind']}; imports included",
        )
        line(
            "(2) the next day's, from (1)'s state, CPU",
            got["step"],
            2.0,
            "s",
            note=f"judging a commit by the learnt weights {got['judge_ms']:.2f} ms",
        )
        with LLMProcess(latency=LATENCY) as llm:
            for case in ("learnt ahead", "yesterday's", "never learnt", "on the path"):
                with tempfile.TemporaryDirectory() as data_dir:
                    got = child(["digest", str(path), day, case, llm.url, data_dir])
                ideal = (math.ceil(got["n"] / CONCURRENCY) + 1) * LATENCY
                line(
                    f"(3) first digest of the day, {case}: wall ÷ ideal (⌈N/C⌉+1)×L",
                    got["wall"] / ideal,
                    1.3,
                    "×",
                    note=f"{got['wall']:.2f} s for {got['n']} commits, ideal {ideal:.2f} s; {got['cpu']:.2f} s CPU; "
                    f"judged by the profile as of {got['profile']}; learning went on {got['after']:.2f} s after",
                )
    print(f"(load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    os.environ.pop("REDIS_URL", None)
    sys.exit(main())

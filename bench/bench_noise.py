"""Noise-control benchmark: messages per digest before and after, on a real repository's week.

  python bench/bench_noise.py --repo PATH/TO/uv.git [--week 2026-01-19] [--tz UTC] [--lang en]
                              [--paths crates/uv-resolver/**]
  (or BENCH_NOISE_REPO=PATH python bench/bench_noise.py …)

PATH is a clone or bare mirror of a busy repository with dependency bots (astral-sh/uv); nothing is
fetched. Every day of the ISO week holding --week (default: the week before the repository's last
commit) is built exactly as the bot builds it — the local git source, the offline analyser, an
embedded Redis — and planned for Slack twice:

  before   the plan as it was: the parent, one thread message per high/medium commit, then the low
           ones fifteen to a message (bots one line each, every low listed)
  after    the noise controls: dependency bots collapsed to one line per bot in one message, the
           first fifteen lows listed, the rest one line with the report link

Each content is rendered by bot/render/slack.py and counted as the payloads it posts (Slack
continues a message that exceeds its size limit in another payload: those count too). Then the
week's roll-up (`week`): its Slack payloads and Feishu cards. With --paths, the same week filtered:
how many commits were analysed out of how many listed.

Asserts nothing; prints the figures for the README.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.core.chat_platform import CommitDetail, DigestParent, LowCommits, entries_at_least  # noqa: E402
from bot.core.models import Importance  # noqa: E402
from bot.core.window import day_window, week_window  # noqa: E402
from bot.delivery.post import LOW_PER_MESSAGE, Plan, parent_content, thread_contents  # noqa: E402
from bot.digest.noise import collapse  # noqa: E402
from bot.digest.pathfilter import PathFilter  # noqa: E402
from bot.digest.rollup import areas_of, shown_entries  # noqa: E402
from bot.render import feishu, slack  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from settings import Settings  # noqa: E402

REPORT = "https://digest.example.com/r/abcdefghijklmnopqrstuv?exp=2000000000&sig=" + "x" * 43


def plan_before(digest) -> list:
    """The thread as it was before the noise controls (bot/delivery/post.py at c558add)."""
    wanted = entries_at_least(digest.entries, "low")
    notable = sorted((e for e in wanted if e.importance is not Importance.LOW), key=lambda e: e.importance.rank)
    replies: list = [CommitDetail(digest, e) for e in notable]
    low = tuple(e for e in wanted if e.importance is Importance.LOW)
    for i in range(0, len(low), LOW_PER_MESSAGE):
        replies.append(LowCommits(digest, low[i : i + LOW_PER_MESSAGE]))
    return [DigestParent(digest, "low", REPORT)] + replies


def plan_after(digest) -> list:
    plan = Plan(digest, "low", False, bots="collapse", files_supported=True)
    return [parent_content(plan, REPORT)] + thread_contents(plan, REPORT)


def slack_messages(contents) -> int:
    return sum(len(slack.render(c, thread="1700000000.000100")) for c in contents)


def commit_lines(contents) -> int:
    """Lines in the thread that each stand for commits: a commit message or low line, a bot line,
    the "… and N more" line."""
    from bot.core.chat_platform import BotUpdates

    n = 0
    for c in contents:
        if isinstance(c, CommitDetail):
            n += 1
        elif isinstance(c, LowCommits):
            n += len(c.entries) + (1 if c.more else 0)
        elif isinstance(c, BotUpdates):
            n += len(c.groups)
    return n


def default_week(repo: str) -> date:
    last = subprocess.run(
        [
            "git",
            "--git-dir" if repo.endswith(".git") or Path(repo, "HEAD").exists() else "-C",
            repo,
            "log",
            "-1",
            "--format=%cs",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return date.fromisoformat(last.strip()) - timedelta(days=7)


async def main(args) -> None:
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(
            _env_file=None,
            default_repo=args.repo,
            data_dir=Path(data),
            default_lang=args.lang,
            default_tz=args.tz,
            digest_cache_ttl=0,
        )
        services = Services.build(settings)
        try:
            source = services.source(args.repo)
            branch = await source.default_branch()
            monday = args.week - timedelta(days=args.week.weekday())
            print(
                f"{source.name} ({branch}), ISO week {monday}..{monday + timedelta(days=6)}, {args.tz}, "
                f"offline analyser, Slack payloads per digest"
            )
            print(
                f"{'day':<11} {'commits':>7} {'H/M/L':>9} {'bots':>5} {'messages before':>16} {'after':>6} "
                f"{'lines before':>13} {'after':>6}"
            )
            totals = [0, 0, 0, 0, 0]
            started = time.perf_counter()
            for i in range(7):
                day = monday + timedelta(days=i)
                d = await services.builder.build(source, day_window(day, args.tz), args.lang, branch)
                if not d.entries:
                    print(f"{day.isoformat():<11} {0:>7} {'-':>9} {'-':>5} {1:>16} {1:>6} {0:>13} {0:>6}")
                    totals[0] += 1
                    totals[1] += 1
                    continue
                _, bots = collapse(d.entries)
                old, new = plan_before(d), plan_after(d)
                row = [slack_messages(old), slack_messages(new), commit_lines(old), commit_lines(new)]
                counts = "/".join(str(d.count(imp)) for imp in Importance)
                print(
                    f"{day.isoformat():<11} {len(d.entries):>7} {counts:>9} {sum(len(g.entries) for g in bots):>5} "
                    f"{row[0]:>16} {row[1]:>6} {row[2]:>13} {row[3]:>6}"
                )
                for k in range(4):
                    totals[k] += row[k]
                totals[4] += len(d.entries)
            print(
                f"{'week':<11} {totals[4]:>7} {'':>9} {'':>5} {totals[0]:>16} {totals[1]:>6} {totals[2]:>13} "
                f"{totals[3]:>6}   (the seven daily pushes)"
            )

            window = week_window(monday, args.tz)
            w = await services.builder.build(source, window, args.lang, branch)
            plan = Plan(
                w,
                "low",
                False,
                bots="collapse",
                week=await areas_of(services.builder, source, shown_entries(w)),
                files_supported=True,
            )
            rollup = parent_content(plan, REPORT)
            print(
                f"weekly roll-up: {len(w.entries)} commits → {len(rollup.areas)} areas, "
                f"{sum(len(es) for _, es in rollup.areas)} high/medium lines, {len(rollup.bots)} bot lines, "
                f"{rollup.low} lows counted in one line; Slack messages {len(slack.render(rollup))}, "
                f"Feishu cards {len(feishu.render_cards(rollup))}; "
                f"the same week as one range digest (`/digest last-week`): {slack_messages(plan_before(w))} "
                f"messages before, {slack_messages(plan_after(w))} after"
            )
            if args.paths:
                filt = PathFilter.of(args.paths)
                f = await services.builder.build(source, window, args.lang, branch, paths=filt)
                print(
                    f"paths {' '.join(filt.paths)}: {len(f.entries)} of {len(f.entries) + f.filtered_out} "
                    f"commits kept (and analysed); digest of the week {slack_messages(plan_after(f))} messages"
                )
            print(f"(built and planned in {time.perf_counter() - started:.0f} s)")
        finally:
            await services.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--repo", default=os.environ.get("BENCH_NOISE_REPO"), help="a clone or bare mirror (or $BENCH_NOISE_REPO)"
    )
    parser.add_argument(
        "--week", type=date.fromisoformat, help="any day of the week (default: the week before the last commit)"
    )
    parser.add_argument("--tz", default="UTC")
    parser.add_argument("--lang", default="en", choices=("en", "zh"))
    parser.add_argument("--paths", nargs="+", metavar="GLOB")
    ns = parser.parse_args()
    if not ns.repo or not Path(ns.repo).exists():
        print("no repository given or found; pass --repo PATH (a clone or mirror of e.g. astral-sh/uv)")
        sys.exit(0)
    ns.week = ns.week or default_week(ns.repo)
    asyncio.run(main(ns))

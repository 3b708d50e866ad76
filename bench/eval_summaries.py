"""What a day's offline entries tell the reader beyond the title, per repository-day.

  python bench/eval_summaries.py --mirrors DIR [--repos a/b,c/d] [--since D] [--until D] [--days N]
  python bench/eval_summaries.py --repo PATH [--date D ...]

Each day's commits are read as a digest reads them (the bot's local git source, the repository's
profile, day boundaries in `--tz`, merges left out) and analysed by the offline analyser in each
language of `--langs`, rules only (`--learned`: with the learned profile, as digests judge).

Printed per repository-day, then pooled:
  facts     the share of entries whose summary carries a fact the title does not, defined
            mechanically: the summary names a file, symbol, flag, setting, dependency or number that
            does not occur in the title. The names are the summary's code spans, paths (a token with
            a '/' or a file extension), `--flags` and version or size numbers; one occurs in the
            title when its text (case-insensitive; a path by its last component; a number without
            its thousands separators) is a substring of the title. `names` is the same without the
            numbers (a file, symbol, flag, setting or dependency the title does not name).
  restate   entries whose summary contains the title's subject word for word (should be 0).
  risk      the share of entries carrying the day's most common risk sentence (exact text) when
            two entries or more carry it, and the same with names and numbers blanked (`template`,
            bench/eval_importance.template).
  levels    high / medium / low counts (mediums per day).
  cpu       the offline analyser's CPU per commit (process time of analyse_offline, one call per
            language; the patches are already read; the least of `--repeat` runs), and the same
            commits read once (read_offline) and told in every language (tell_offline).

The busiest `--days` days (UTC calendar days, by commit count) in [--since, --until) are taken; the
default range is the 45 days before the mirror's newest commit. astral-sh/uv is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.eval_importance import template  # noqa: E402
from bot.analysis.offline import analyse_offline, parse_title  # noqa: E402

try:  # the analyser reads a commit once for every language (issue 33)
    from bot.analysis.offline import read_offline, tell_offline
except ImportError:  # an older analyser, for a before/after figure
    read_offline = tell_offline = None  # type: ignore[assignment]
from bot.analysis.offline import patch  # noqa: E402
from bot.analysis.repo_config import load_profile  # noqa: E402
from bot.core.models import Analysis, Commit, Importance  # noqa: E402
from bot.core.window import day_window  # noqa: E402
from bot.evaluation.card import mirror_path  # noqa: E402
from bot.sources.localgit import LocalGitSource  # noqa: E402

REPOS = (
    "astral-sh/ruff",
    "python/mypy",
    "psf/black",
    "python-poetry/poetry",
    "pytest-dev/pytest",
    "pypa/pip",
    "pydantic/pydantic",
)
RESERVED = {"astral-sh/uv"}

_SPAN = re.compile(r"`([^`\n]+)`")
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z0-9][\w-]*")
_PATH = re.compile(r"(?<![\w./-])(?:[\w.-]+/)+[\w.-]*|\b[\w-]+\.(?:[a-z]{1,5}|[A-Z]{1,4})\b")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*\d|\b\d\b")


def summary_names(summary: str) -> tuple[list[str], list[str]]:
    """(names, numbers) the summary carries: code spans, flags and paths; version and size numbers."""
    names = [m.group(1).strip() for m in _SPAN.finditer(summary)]
    rest = _SPAN.sub(" ", summary)
    names += _FLAG.findall(rest) + [p for p in _PATH.findall(rest) if re.search(r"[A-Za-z]", p)]
    numbers = _NUMBER.findall(rest)
    return [n for n in names if n], numbers


def in_title(token: str, title: str) -> bool:
    """Does the title name it? A name as a substring (a path by its last component), a number as a
    whole number ("5" is not in "#14155")."""
    t = title.lower()
    token = token.lower().strip("/.,;:")
    if not token:
        return True
    if re.fullmatch(r"[\d,.]+", token):
        number = re.escape(token.replace(",", ""))
        return bool(re.search(rf"(?<![\d.]){number}(?![\d]|\.\d)", t.replace(",", "")))
    if "/" in token and token.rstrip("/").rsplit("/", 1)[-1] in t:
        return True
    return token in t


def carries_fact(summary: str, title: str, names_only: bool = False) -> bool:
    names, numbers = summary_names(summary)
    pool = names if names_only else names + numbers
    return any(not in_title(n, title) for n in pool)


def restates(summary: str, title: str) -> bool:
    subject = parse_title(title).subject.strip().rstrip(".")
    return len(subject) >= 12 and subject.lower() in summary.lower()


@dataclass
class Day:
    repo: str
    day: date
    entries: list[tuple[Commit, dict[str, Analysis]]] = field(default_factory=list)
    cpu: float = 0.0  # seconds, all languages, one analyse_offline call per language
    calls: int = 0
    cpu_once: float = 0.0  # seconds, read once (read_offline) and told in every language


def measures(day: Day, langs: list[str]) -> dict:
    n = len(day.entries)
    out: dict = {"n": n}
    for lang in langs:
        out[f"facts_{lang}"] = sum(carries_fact(a[lang].summary, c.title) for c, a in day.entries) / n
        out[f"names_{lang}"] = sum(carries_fact(a[lang].summary, c.title, True) for c, a in day.entries) / n
        out[f"restate_{lang}"] = sum(restates(a[lang].summary, c.title) for c, a in day.entries)
    lang = langs[0]
    exact = Counter(r for _, a in day.entries for r in set(a[lang].risks))
    shaped = Counter(t for _, a in day.entries for t in {template(r) for r in a[lang].risks})
    out["risk_top"] = exact.most_common(1)[0] if exact else ("", 0)
    # shared: on two entries or more (one entry's own risk is no shared sentence, however short the day)
    out["risk_share"] = out["risk_top"][1] / n if out["risk_top"][1] >= 2 else 0.0
    top_shape = shaped.most_common(1)[0][1] if shaped else 0
    out["template_share"] = top_shape / n if top_shape >= 2 else 0.0
    levels = Counter(a[lang].importance for _, a in day.entries)
    out["levels"] = tuple(levels[i] for i in (Importance.HIGH, Importance.MEDIUM, Importance.LOW))
    out["cpu_ms"] = 1000 * day.cpu / max(1, n)
    out["cpu_once_ms"] = 1000 * day.cpu_once / max(1, n)
    return out


def print_day(day: Day, m: dict, langs: list[str]) -> None:
    facts = " ".join(f"facts[{lang}]={m[f'facts_{lang}']:.0%}/{m[f'names_{lang}']:.0%}" for lang in langs)
    restate = sum(m[f"restate_{lang}"] for lang in langs)
    high, medium, low = m["levels"]
    print(
        f"{day.repo:<22} {day.day}  n={m['n']:>3}  {facts}  restate={restate}  "
        f"risk={m['risk_share']:.0%} template={m['template_share']:.0%}  "
        f"levels h/m/l={high}/{medium}/{low}  cpu={m['cpu_ms']:.2f} ms/commit ({len(langs)} langs; "
        f"read once {m['cpu_once_ms']:.2f})"
    )


def _forget() -> None:
    """Empty the analyser's memos (parsed titles, split patches): each run reads the day afresh."""
    for memo in (parse_title, getattr(patch, "_split", None)):
        if hasattr(memo, "cache_clear"):
            memo.cache_clear()


async def read_day(
    source: LocalGitSource, repo: str, day: date, langs: list[str], learned, profile, repeat: int = 1
) -> Day:
    window = day_window(day, "UTC")
    listed = await source.list_commits(window)
    source.expect_files(listed)
    read = []
    for c in listed:
        files = await source.get_files(c.sha)
        commit = await source.get_commit(c.sha)
        judgement = await learned.judge(source, commit, files) if learned is not None else None
        read.append((commit, files, judgement))
    out = Day(repo, day)
    best = float("inf")
    for _ in range(max(1, repeat)):  # the least of `repeat` runs: the machine is shared
        _forget()
        entries = []
        began = time.process_time()
        for commit, files, judgement in read:
            analyses = {
                lang: analyse_offline(commit, files, lang, profile=profile, judgement=judgement) for lang in langs
            }
            entries.append((commit, analyses))
        best = min(best, time.process_time() - began)
    out.entries, out.cpu, out.calls = entries, best, len(read) * len(langs)
    if read_offline is not None:
        once = float("inf")
        for _ in range(max(1, repeat)):
            _forget()
            began = time.process_time()
            for commit, files, judgement in read:
                reading = read_offline(commit, files, profile, judgement)
                for lang in langs:
                    tell_offline(reading, lang)
            once = min(once, time.process_time() - began)
        out.cpu_once = once
    return out


async def busiest_days(source: LocalGitSource, since: date | None, until: date | None, n: int) -> list[date]:
    head = await source._arun("log", "-1", "--format=%cs", "HEAD")
    last = date.fromisoformat(head.strip())
    until = until or last + timedelta(days=1)
    since = since or until - timedelta(days=45)
    out = await source._arun(
        "log", "--no-merges", "--format=%cd", "--date=format-local:%Y-%m-%d", f"--since={since}", f"--until={until}"
    )
    counts = Counter(line for line in out.split() if line)
    chosen = [d for d, _ in counts.most_common() if since <= date.fromisoformat(d) < until][:n]
    return sorted(date.fromisoformat(d) for d in chosen)


async def run(args) -> int:
    langs = args.langs.split(",")
    targets: list[tuple[str, str]] = []
    if args.repo:
        targets.append((Path(args.repo).resolve().name, args.repo))
    else:
        for repo in args.repos.split(","):
            if repo in RESERVED:
                print(f"{repo} is reserved for the maintainers' checks: not evaluated here")
                continue
            path = mirror_path(Path(args.mirrors), repo)
            if path is None:
                print(f"{repo}: no mirror under {args.mirrors}, skipped")
                continue
            targets.append((repo, str(path)))
    pooled: list[tuple[Day, dict]] = []
    for repo, path in targets:
        source = LocalGitSource(path)
        profile = (await load_profile(source))[0]
        learned = None
        if args.learned:
            from bot.taste.book import TasteBook

            learned = TasteBook(None, history_limit=2000)
        since = date.fromisoformat(args.since) if args.since else None
        until = date.fromisoformat(args.until) if args.until else None
        days = (
            [date.fromisoformat(d) for d in args.date]
            if args.date
            else await busiest_days(source, since, until, args.days)
        )
        for day in days:
            d = await read_day(source, repo, day, langs, learned, profile, args.repeat)
            if not d.entries:
                print(f"{repo:<22} {day}  no commits")
                continue
            m = measures(d, langs)
            print_day(d, m, langs)
            if args.show:
                text, k = m["risk_top"]
                if k:
                    print(f"    most common risk ({k}×): {text[:150]}")
                for c, a in d.entries:
                    first = a[langs[0]]
                    print(f"    {first.importance.value[:3]} {c.short_sha} {c.title[:70]!r}")
                    for lang in langs:
                        print(f"        [{lang}] {a[lang].summary[:220]}")
            pooled.append((d, m))
    if pooled:
        n = sum(m["n"] for _, m in pooled)
        print(f"\npooled: {len(pooled)} repository-days, {n} commits")
        for lang in langs:
            facts = sum(m[f"facts_{lang}"] * m["n"] for _, m in pooled) / n
            names = sum(m[f"names_{lang}"] * m["n"] for _, m in pooled) / n
            worst = min(m[f"facts_{lang}"] for _, m in pooled)
            print(
                f"  [{lang}] entries with a fact the title lacks: {facts:.1%} (names only {names:.1%}); worst day {worst:.0%}"
            )
        over = sum(1 for _, m in pooled if m["risk_share"] > 0.10)
        print(f"  days whose most common risk sentence is on more than 10% of entries: {over}/{len(pooled)}")
        print(
            f"  worst day's shared risk: {max(m['risk_share'] for _, m in pooled):.0%} (template {max(m['template_share'] for _, m in pooled):.0%})"
        )
        mediums = [m["levels"][1] / m["n"] for _, m in pooled]
        print(f"  mediums per day: mean {sum(mediums) / len(mediums):.0%} of entries, most {max(mediums):.0%}")
        calls = sum(d.calls for d, _ in pooled)
        cpu = sum(d.cpu for d, _ in pooled)
        commits = sum(m["n"] for _, m in pooled)
        print(f"  CPU per commit and language: {1000 * cpu / max(1, calls):.2f} ms ({calls} analyses)")
        if read_offline is not None:
            once = sum(d.cpu_once for d, _ in pooled)
            print(
                f"  CPU per commit, read once and told in {len(langs)} languages: {1000 * once / max(1, commits):.2f} ms "
                f"({once / cpu if cpu else 0:.2f}× the {len(langs)} separate analyses)"
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mirrors", help="directory holding <owner>+<name>/repo git mirrors")
    parser.add_argument("--repos", default=",".join(REPOS))
    parser.add_argument("--repo", help="one local repository instead of the mirrors")
    parser.add_argument("--date", action="append", help="a day (YYYY-MM-DD, UTC); repeatable")
    parser.add_argument("--since", help="first day of the range the busiest days are taken from")
    parser.add_argument("--until", help="day after the range")
    parser.add_argument("--days", type=int, default=3, help="the busiest N days of the range")
    parser.add_argument("--langs", default="zh,en")
    parser.add_argument("--learned", action="store_true", help="rules + the learned profile, as digests judge")
    parser.add_argument("--show", action="store_true", help="print each entry's summary")
    parser.add_argument("--repeat", type=int, default=1, help="time the analyses this many times, keep the least")
    args = parser.parse_args(argv)
    if not args.repo and not args.mirrors:
        print("nothing to evaluate: give --mirrors DIR or --repo PATH")
        return 0
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())

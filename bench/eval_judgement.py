"""Judgement against the maintainers' own release notes, held out in time.

  python bench/eval_judgement.py --mirrors DIR [--period tune|heldout|heldout2|heldout3] [--repos a/b,c/d] [--limit N]
  python bench/eval_judgement.py --mirrors DIR --period heldout2 --labels-only

For each repository (fetched mirrors `DIR/<owner>+<name>/repo`), the labels of a period's commits
come from the release notes as they stand at the mirror's newest commit (listed under Breaking
changes/Security → high, another user-facing heading → medium, documentation/internal or released
unlisted → low; commits too recent to have been released are left out). Each commit is judged as
a digest judges it: the offline rules alone, then rules + the learned profile as of 00:00 UTC of its
day (bot/taste: only what was published before that moment).

The periods were fixed before any run, and the held-out one was not looked at while tuning:
  tune     2026-01-01 .. 2026-04-01
  heldout  2026-04-01 .. 2026-07-01
  heldout2 2026-01-01 .. 2026-07-01, on other repositories (HELDOUT2_REPOS, its default): never
           evaluated before, so nothing was tuned on them; fixed before any prediction was run
  heldout3 2026-07-01 .. 2026-08-01, on the tune/heldout repositories: later in time than any
           period run before; fixed with heldout2
astral-sh/uv is reserved for the maintainers' own checks and is refused here.

`--labels-only` reads only the label side (the notes, and how they label the period's commits),
prints per repository the verdict and the high/medium/low counts, and exits before any prediction.

Printed per repository and pooled: commits, binary κ (low vs above low), above-low recall and
precision, 3-level κ, the share of rule levels the profile changed, and profile learning time.

Each day's profile is learnt as the bot learns it (bot/taste/learn.py: from the day before's
state) and judges as the bot judges (bot/taste/judge.py: the weights, numpy); `--model
naive_bayes` fits each day afresh with scikit-learn, for the comparison of the two models.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.analysis.offline import RULES_VERSION, analyse_offline  # noqa: E402
from bot.core.models import SourceError  # noqa: E402
from bot.evaluation.card import mirror_path  # noqa: E402
from bot.sources.localgit import LocalGitSource  # noqa: E402
from bot.taste.book import HISTORY_LIMIT, epoch, label_as_of, read_notes  # noqa: E402
from bot.taste.examples import label_history  # noqa: E402
from bot.taste.judge import Judge  # noqa: E402
from bot.taste.learn import learn  # noqa: E402
from bot.taste.model import LearnedProfile  # noqa: E402
from bot.taste.scores import cohen_kappa  # noqa: E402

PERIODS = {
    "tune": (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC)),
    "heldout": (datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)),
}
REPOS = (
    "astral-sh/ruff",
    "python/mypy",
    "psf/black",
    "python-poetry/poetry",
    "pytest-dev/pytest",
    "pypa/pip",
    "pydantic/pydantic",
)
# The second held-out set: repositories no rule was tuned on, kept where the bot's notes reader
# yields labels. Left out, with the reason (checked with --labels-only, before any prediction):
#   pylint-dev/pylint  notes under doc/whatsnew/ (fragments in doc/whatsnew/fragments/), a place
#                      bot/taste/notes.py does not read: no notes
#   pypa/setuptools    NEWS.rst and newsfragments/ cite issues; 4 of 263 commits since 2025-06 carry
#                      a PR number and the notes list all 4: "lists everything", no labels
#   sphinx-doc/sphinx  11 commits in the period; CHANGES.rst holds only the version in development
#                      (older ones under doc/changes/, not read): "lists everything", no labels
#   huggingface/peft, huggingface/trl  notes only in GitHub Releases, which a mirror lacks
HELDOUT2 = (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC))
HELDOUT2_REPOS = ("python-attrs/attrs", "tox-dev/tox")
# Not in PERIODS, which eval_upgrade shares: over its repositories this span holds the tune quarter.
# The third: the tune/heldout repositories one month later (July 2026), fixed with heldout2 before any
# prediction was run. It ends before the first commit of the blind-labelled importance sets
# (tests/data/importance_labels*.jsonl: ruff 2026-08-17.., pydantic 2026-08-03..), on which rules may be tuned.
HELDOUT3 = (datetime(2026, 7, 1, tzinfo=UTC), datetime(2026, 8, 1, tzinfo=UTC))
JUDGEMENT_PERIODS = {**PERIODS, "heldout2": HELDOUT2, "heldout3": HELDOUT3}
DEFAULT_REPOS = {"heldout2": HELDOUT2_REPOS}  # the other periods: REPOS
RESERVED = {"astral-sh/uv"}
CACHE = Path("/tmp") / f"eval_judgement_rules_{RULES_VERSION}.json"


def mirrored_repos(mirrors: str, repos: str):
    """(repo, mirror path) for each of the comma-separated repos that is not reserved and has a
    mirror under `mirrors`; says which are skipped and why."""
    for repo in repos.split(","):
        if repo in RESERVED:
            print(f"{repo} is reserved for the maintainers' checks: not evaluated here")
            continue
        path = mirror_path(Path(mirrors), repo)
        if path is None:
            print(f"{repo}: no mirror under {mirrors}, skipped")
            continue
        yield repo, path


def binary(level: str) -> str:
    return "low" if level == "low" else "medium"  # κ over two of the three levels


def scores(pairs: list[tuple[str, str]]) -> dict:
    tp = sum(1 for t, p in pairs if t != "low" and p != "low")
    fp = sum(1 for t, p in pairs if t == "low" and p != "low")
    fn = sum(1 for t, p in pairs if t != "low" and p == "low")
    return {
        "n": len(pairs),
        "kappa2": cohen_kappa([(binary(t), binary(p)) for t, p in pairs]),
        "kappa3": cohen_kappa(pairs),
        "recall": tp / (tp + fn) if tp + fn else float("nan"),
        "precision": tp / (tp + fp) if tp + fp else float("nan"),
        "missed_high": sum(1 for t, p in pairs if t == "high" and p == "low"),
    }


async def labelled_history(source: LocalGitSource):
    """Every commit since well before the periods (newest first), and their labels by the release
    notes as they stand at the mirror's newest commit: (history, examples, verdict)."""
    head = (await source._arun("rev-parse", "HEAD")).strip()
    final_notes = await read_notes(source, head)
    history = await source.history(head, 20000)
    history = [c for c in history if c.committed_at >= datetime(2025, 6, 1, tzinfo=UTC)]
    examples, verdict = label_history(history, final_notes)
    return history, examples, verdict


async def evaluate_repo(
    repo: str, path: Path, start: datetime, end: datetime, limit: int, rules_cache: dict, model: str
):
    source = LocalGitSource(str(path))
    history, final, verdict = await labelled_history(source)
    truth = {e.sha: e for e in final}
    period = [c for c in history if start <= c.committed_at < end and c.sha in truth]
    period.reverse()
    if limit:
        period = period[:limit]
    profiles: dict[datetime, tuple[LearnedProfile | Judge | None, str, float]] = {}
    rows = []
    state = None
    for commit in period:
        week = epoch(commit.committed_at)
        if week not in profiles:
            began = time.process_time()
            fitted: LearnedProfile | Judge | None
            if model == "logistic":  # as the bot learns and judges
                learned, state = await learn(source, week, None, HISTORY_LIMIT, state)
                v = learned.verdict
                fitted = Judge(learned.weights) if learned.weights else None
            else:
                examples, v = await label_as_of(source, week)
                fitted = LearnedProfile(examples, model) if v.usable else None
            profiles[week] = (fitted, v.kind, time.process_time() - began)
        fitted, kind, _ = profiles[week]
        key = f"{repo}:{commit.sha}"
        if key not in rules_cache:
            try:
                files = await source.get_files(commit.sha)
            except SourceError:
                continue  # a blob the mirror lacks (files of 4 MiB and more)
            full = await source.get_commit(commit.sha)
            rules_cache[key] = {
                "level": analyse_offline(full, files, "en").importance.value,
                "paths": [f.path for f in files],
                "added": [f.path for f in files if f.status == "added"],
            }
        cached = rules_cache[key]
        learned_level = cached["level"]
        if fitted is not None:
            full = await source.get_commit(commit.sha)
            files = await source.get_files(commit.sha)
            judgement = fitted.judge(full.title, cached["paths"], cached["added"])
            learned_level = analyse_offline(full, files, "en", judgement=judgement).importance.value
        rows.append((truth[commit.sha].level.value, cached["level"], learned_level, kind))
    times = [t for _, _, t in profiles.values()]
    return verdict.kind, rows, times


async def label_counts(repo: str, path: Path, start: datetime, end: datetime) -> str:
    """One line: the notes' verdict and how they label the period's commits (no prediction)."""
    source = LocalGitSource(str(path))
    history, final, verdict = await labelled_history(source)
    truth = {e.sha: e for e in final}
    period = [c for c in history if start <= c.committed_at < end]
    levels = [truth[c.sha].level.value for c in period if c.sha in truth]
    counts = "  ".join(f"{level}={levels.count(level)}" for level in ("high", "medium", "low"))
    return (
        f"{repo:<26} notes {verdict.kind:<16} listed {verdict.listed_share:.0%} of released PRs; "
        f"period commits {len(period)}, labelled {len(levels)}: {counts}"
    )


def line(name: str, s: dict) -> str:
    return (
        f"{name:<28} n={s['n']:>4}  κ2={s['kappa2']:.2f}  recall={s['recall']:.2f}  "
        f"precision={s['precision']:.2f}  κ3={s['kappa3']:.2f}  missed highs={s['missed_high']}"
    )


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mirrors", required=True)
    parser.add_argument("--period", choices=sorted(JUDGEMENT_PERIODS), default="tune")
    parser.add_argument("--repos", default=None, help="comma-separated; default: the period's repositories")
    parser.add_argument("--limit", type=int, default=0, help="commits per repository (0: all)")
    parser.add_argument("--model", choices=("naive_bayes", "logistic"), default="logistic")
    parser.add_argument("--labels-only", action="store_true", help="label counts per repository, no prediction")
    parser.add_argument("--rules-cache", type=Path, default=CACHE, help="where the rules' levels are kept between runs")
    args = parser.parse_args()
    start, end = JUDGEMENT_PERIODS[args.period]
    repos = args.repos or ",".join(DEFAULT_REPOS.get(args.period, REPOS))
    if args.labels_only:
        for repo, path in mirrored_repos(args.mirrors, repos):
            print(await label_counts(repo, path, start, end))
        return 0
    cache = args.rules_cache
    rules_cache = json.loads(cache.read_text()) if cache.exists() else {}
    pooled_rules, pooled_learned = [], []
    for repo, path in mirrored_repos(args.mirrors, repos):
        kind, rows, times = await evaluate_repo(repo, path, start, end, args.limit, rules_cache, args.model)
        cache.write_text(json.dumps(rules_cache))
        learned_kinds = {k for *_, k in rows}
        print(
            f"\n{repo}: final notes {kind}; profiles {sorted(learned_kinds)}; learning "
            f"{min(times, default=0):.2f}–{max(times, default=0):.2f} s CPU per profile ({len(times)} days)"
        )
        rules = [(t, r) for t, r, _, _ in rows]
        learned = [(t, lv) for t, _, lv, _ in rows]
        print("  " + line("rules alone", scores(rules)))
        print("  " + line("rules + learned profile", scores(learned)))
        changed = sum(1 for _, r, lv, _ in rows if r != lv)
        print(f"  levels changed by the profile: {changed}/{len(rows)}")
        if kind == "ok":
            pooled_rules += rules
            pooled_learned += learned
    print("\npooled over repositories whose notes carry a signal:")
    print("  " + line("rules alone", scores(pooled_rules)))
    print("  " + line("rules + learned profile", scores(pooled_learned)))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

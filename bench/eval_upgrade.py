"""The upgrade report's sections against the maintainers' own release notes, held out in time.

  python bench/eval_upgrade.py --mirrors DIR [--period tune|heldout] [--repos a/b,c/d]

For each repository (fetched mirrors `DIR/<owner>+<name>/repo`) and each final release tagged in
the period, the bot builds the release's upgrade report exactly as a user gets it:
`python -m bot digest --repo MIRROR --release TAG --format json` (the offline analyser and the
learned profile, no LLM), and each commit's place in it is compared with where the maintainers
listed its pull request in their release notes as they stand at the mirror's newest commit
(bot/taste/notes.py reads the headings and towncrier fragments; bot/taste/examples.py labels):

  maintainers            the report
  must   breaking, security, deprecation    must   breaking, removals, new defaults, security
  feature                                   features
  fix (and performance)                     fixes
  other user-facing heading                 other
  docs, internal, unlisted                  low (the counted line)

Printed per repository and pooled: must-handle recall (of the maintainers' breaking, security and
deprecation entries, the share the report leads with) and how many of them the report hides in
the low line; must-handle precision (of what the report leads with, the share the maintainers
put there too); for the maintainers' features and fixes that the report lists, the share in the
matching section; and above-low recall and precision (listed vs the low line).

The periods are eval_judgement.py's, fixed before any run of this script; the sections were
tuned on `tune` at most, and `heldout` is the figure to report:
  tune     2026-01-01 .. 2026-04-01
  heldout  2026-04-01 .. 2026-07-01
astral-sh/uv is reserved for the maintainers' own checks and is refused here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval_judgement import PERIODS, labelled_history, mirrored_repos  # noqa: E402  # the same periods, fixed before either ran

from bot.sources.localgit import LocalGitSource  # noqa: E402

REPOS = ("python/mypy", "psf/black", "python-poetry/poetry", "pytest-dev/pytest", "pypa/pip", "pydantic/pydantic")
FINAL = re.compile(r"^v?\d+(?:\.\d+)+$")  # a final release's tag: no pre-release, dev or package prefix

THEIRS = {
    "breaking": "must",
    "security": "must",
    "deprecation": "must",
    "feature": "features",
    "fix": "fixes",
    "performance": "fixes",
    "other": "other",
    "docs": "low",
    "internal": "low",
    "unlisted": "low",
}
OURS = {
    "breaking": "must",
    "removals": "must",
    "defaults": "must",
    "security": "must",
    "features": "features",
    "fixes": "fixes",
    "other": "other",
}


async def truth_of(path: Path) -> dict[str, str]:
    """sha → the maintainers' bucket, for every commit their notes (or fragments) label."""
    _history, examples, _verdict = await labelled_history(LocalGitSource(str(path)))
    return {e.sha: THEIRS.get(e.category, "other") for e in examples if e.category != "correction"}


def releases(path: Path, start: datetime, end: datetime) -> list[str]:
    out = subprocess.run(
        [
            "git",
            "--git-dir",
            str(path),
            "for-each-ref",
            "refs/tags",
            "--format=%(refname:short) %(creatordate:iso-strict)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    tags = []
    for line in out.splitlines():
        tag, _, when = line.partition(" ")
        at = datetime.fromisoformat(when).astimezone(UTC)
        if FINAL.match(tag) and start <= at < end:
            tags.append((at, tag))
    return [t for _, t in sorted(tags)]


def report_of(path: Path, tag: str, data_dir: str) -> tuple[dict[str, str], str]:
    """sha → the report's bucket for the release TAG, as the CLI builds it; '' or the CLI's error."""
    env = {**os.environ, "DATA_DIR": data_dir}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_MODEL", "REDIS_URL"):
        env.pop(name, None)  # the offline analyser, the embedded Redis
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "digest",
            "--repo",
            str(path),
            "--release",
            tag,
            "--format",
            "json",
            "--lang",
            "en",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=1800,
    )
    if run.returncode != 0:
        return {}, (run.stderr.strip().splitlines() or ["exit %d" % run.returncode])[-1]
    digest = json.loads(run.stdout)["digests"][0]
    placed = {sha: OURS[s["key"]] for s in digest["upgrade"]["sections"] if s["key"] in OURS for sha in s["commits"]}
    return {e["commit"]["sha"]: placed.get(e["commit"]["sha"], "low") for e in digest["entries"]}, ""


def ratio(a: int, b: int) -> str:
    return f"{a / b:.2f} ({a}/{b})" if b else "n/a (0/0)"


def summary(pairs: list[tuple[str, str]]) -> list[str]:
    """pairs: (theirs, ours) per commit."""
    count = Counter(pairs)
    must = sum(n for (t, _), n in count.items() if t == "must")
    led = count[("must", "must")]
    hidden = count[("must", "low")]
    ours_must = sum(n for (_, o), n in count.items() if o == "must")
    feats = sum(n for (t, o), n in count.items() if t == "features" and o != "low")
    fixes = sum(n for (t, o), n in count.items() if t == "fixes" and o != "low")
    above = sum(n for (t, _), n in count.items() if t != "low")
    listed = sum(n for (_, o), n in count.items() if o != "low")
    both = sum(n for (t, o), n in count.items() if t != "low" and o != "low")
    return [
        f"commits {len(pairs)}; the maintainers' must-handle entries {must}",
        f"must-handle recall {ratio(led, must)}; hidden in the low line {hidden}",
        f"must-handle precision {ratio(led, ours_must)}",
        f"features in features {ratio(count[('features', 'features')], feats)}; "
        f"fixes in fixes {ratio(count[('fixes', 'fixes')], fixes)}",
        f"above-low recall {ratio(both, above)}; precision {ratio(both, listed)}",
    ]


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mirrors", required=True)
    parser.add_argument("--period", choices=sorted(PERIODS), default="tune")
    parser.add_argument("--repos", default=",".join(REPOS))
    parser.add_argument("--show", action="store_true", help="list each must-handle disagreement")
    args = parser.parse_args()
    start, end = PERIODS[args.period]
    pooled: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as data_dir:
        for repo, path in mirrored_repos(args.mirrors, args.repos):
            truth = await truth_of(path)
            pairs: list[tuple[str, str]] = []
            print(f"\n{repo}:")
            for tag in releases(path, start, end):
                ours, error = report_of(path, tag, data_dir)
                if error:
                    print(f"  {tag}: not built: {error}")
                    continue
                rows = [(truth[sha], o, sha) for sha, o in ours.items() if sha in truth]
                pairs += [(t, o) for t, o, _ in rows]
                print(f"  {tag}: {len(ours)} commits, {len(rows)} labelled by the notes")
                if args.show:
                    for t, o, sha in rows:
                        if (t == "must") != (o == "must"):
                            title = subprocess.run(
                                ["git", "--git-dir", str(path), "log", "-1", "--format=%s", sha],
                                capture_output=True,
                                text=True,
                            ).stdout.strip()
                            print(f"    theirs {t:<8} ours {o:<8} {sha[:10]} {title}")
            for line in summary(pairs):
                print("  " + line)
            pooled += pairs
    print(f"\npooled ({args.period}):")
    for line in summary(pooled):
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

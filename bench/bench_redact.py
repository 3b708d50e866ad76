"""Redaction speed: MB/s on a month of real patches, and its share of building the prompts.

    python bench/bench_redact.py --repo GIT_DIR [--days 30] [--repeat 3]

The corpus is read at run time from a git repository (a fetched mirror of a busy project such as
astral-sh/uv; the path by --repo or $BENCH_REDACT_REPO): every non-merge commit of the last --days days before its
newest commit, split into files as the bot receives them. It measures
  * redact() alone over every patch (MB/s; the issue's floor: ~6 MB/s);
  * building each commit's analysis prompt (Analyzer._prompt: diff selection, redaction of the
    diff and of the commit's texts, rendering, shrinking to the budget) and the share of that
    time spent in redaction.
Nothing is sent anywhere. Without the repository it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot import redact as redact_module  # noqa: E402
from bot.analysis.analyze import Analyzer  # noqa: E402
from bot.core.models import Commit, FileChange  # noqa: E402
from bot.core.prompts import Prompts  # noqa: E402
from settings import Settings  # noqa: E402


def load_commits(repo: Path, days: int) -> list[tuple[Commit, list[FileChange]]]:
    git = ["git", "--git-dir", str(repo)]
    newest = int(
        subprocess.run([*git, "log", "-1", "--format=%ct", "HEAD"], capture_output=True, text=True, check=True).stdout
    )
    log = subprocess.run(
        [
            *git,
            "log",
            "--no-merges",
            "-p",
            "--no-color",
            "--no-ext-diff",
            "--format=%x00%H%x1f%an%x1f%ct%x1f%B%x01",
            f"--since={newest - days * 86400}",
            f"--until={newest}",
            "HEAD",
        ],
        capture_output=True,
        check=True,
    ).stdout
    commits = []
    for chunk in log.decode("utf-8", "replace").split("\x00")[1:]:
        head, _, patch = chunk.partition("\x01")
        sha, author, when, message = head.split("\x1f", 3)
        title, _, body = message.strip().partition("\n")
        files = []
        for part in re.split(r"\ndiff --git ", "\n" + patch)[1:]:
            m = re.match(r"a/(\S+) b/(\S+)", part)
            if not m:
                continue
            body_text = part[part.find("\n@@") + 1 :] if "\n@@" in part else None
            adds = sum(1 for line in (body_text or "").split("\n") if line.startswith("+"))
            dels = sum(1 for line in (body_text or "").split("\n") if line.startswith("-"))
            files.append(
                FileChange(
                    path=m.group(2),
                    status="modified",
                    additions=adds,
                    deletions=dels,
                    patch=body_text,
                    binary="Binary files" in part[:400],
                )
            )
        commits.append(
            (
                Commit(
                    repo=repo.parent.name.replace("+", "/"),
                    sha=sha,
                    title=title,
                    body=body.strip(),
                    author=author,
                    committed_at=datetime.fromtimestamp(int(when), UTC),
                ),
                files,
            )
        )
    return commits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--repo",
        default=os.environ.get("BENCH_REDACT_REPO"),
        help="a git directory of a busy project (or $BENCH_REDACT_REPO)",
    )
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.repo:
        print("no repository given (--repo GIT_DIR or $BENCH_REDACT_REPO); nothing measured")
        return 0
    repo = Path(args.repo)
    if not repo.is_dir():
        print(f"no repository at {repo}; skipped (fetch a busy project's mirror, or pass --repo)")
        return 0
    commits = load_commits(repo, args.days)
    patches = [f.patch for _, files in commits for f in files if f.patch]
    size = sum(len(p.encode()) for p in patches)
    print(
        f"corpus: {repo.parent.name.replace('+', '/')}, {len(commits)} commits of {args.days} days, "
        f"{len(patches)} patches, {size / 1e6:.1f} MB"
    )

    best = float("inf")
    for _ in range(args.repeat):
        start = time.process_time()
        found = sum(redact_module.redact(p).count for p in patches)
        best = min(best, time.process_time() - start)
    print(
        f"redact() alone: {size / 1e6 / best:.1f} MB/s ({best:.2f} s, {found} redactions); floor ~6 MB/s "
        f"-> {size / 1e6 / best / 6:.2f}x the floor"
    )

    # building every commit's prompt, timing the redaction inside it
    # _prompt asks the LLM client only for its prompt budget: a stand-in that never sends anything
    llm = SimpleNamespace(max_prompt_tokens=12000, model="bench")
    analyzer = Analyzer(llm, Prompts(ROOT / "prompts"), Settings(llm_max_prompt_tokens=12000))
    spent = {"redact": 0.0}
    original = redact_module.redact

    def timed(text):
        t = time.process_time()
        try:
            return original(text)
        finally:
            spent["redact"] += time.process_time() - t

    import bot.analysis.analyze as analyze_module
    import bot.diffs.packing as diffs_module

    patched = [(redact_module, "redact"), (diffs_module, "redact"), (analyze_module, "redact")]
    saved = [(mod, name, getattr(mod, name)) for mod, name in patched if hasattr(mod, name)]
    text_redact = analyze_module.redact_text
    for mod, name, _ in saved:
        setattr(mod, name, timed)
    analyze_module.redact_text = lambda text: timed(text).text
    diffs_module.redact_text = analyze_module.redact_text
    try:
        start = time.process_time()
        for commit, files in commits:
            analyzer._prompt(commit, files, "en", None, None)
        total = time.process_time() - start
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)
        analyze_module.redact_text = text_redact
        diffs_module.redact_text = redact_module.redact_text
    share = spent["redact"] / total if total else 0.0
    print(
        f"building {len(commits)} prompts: {total:.2f} s ({1000 * total / max(len(commits), 1):.1f} ms each); "
        f"redaction {spent['redact']:.2f} s = {100 * share:.0f}% of it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Downstream conflict prediction on a real fork's history: precision, recall, time per commit.

    python bench/bench_downstream.py --fork-git GIT_DIR [--branch habana_main]
        [--merge-subject "Merge remote-tracking branch 'upstream/main'"] [--per-merge 150]
        [--max-merges 0] [--held-out 0.5] [--mode synthetic]

The fork is a git directory holding the fork's branch (a fetched mirror such as HabanaAI/vllm-fork;
the path by --fork-git or $BENCH_DOWNSTREAM_FORK). Its upstream merges — merge commits M reachable
from --branch whose subject starts with --merge-subject, parents P1 (the fork's side) and P2 (the
upstream side) — are the ground truth:

  * the files that really conflicted in M: `git merge-tree --write-tree P1 P2` re-run now (what
    git reports for that merge, whatever the fork's maintainers then did by hand);
  * the commits M brought in: `git rev-list --no-merges P2 ^P1` (at most --per-merge of them per
    merge, evenly spaced, so one huge rebase does not dominate);
  * a commit C is a TRUE conflict when it touches (either side of a rename counted) a file that
    conflicted in M.

The prediction is the bot's own, as a digest makes it with `--fork` on the day C landed and the
fork at P1: C conflicts when it touches a file the fork patches (diff of merge-base(P1, P2)..P1)
AND cherry-picking C alone onto P1 conflicts (bot.fork.conflict, no checkout). The baseline
"touches a patched file" alone is reported beside it.

A second, stricter truth is printed beside it, line level: C is a TRUE conflict when `git blame
merge-base..P2` names C as the last writer of a line on the upstream side of a conflict region of
the re-run merge (a modify/delete conflict, or a region whose upstream side is empty, falls back to
the file-level rule for that file).

Held out: the newest merges were run while the bench and its definitions were written; the oldest
--held-out share of the merges was not looked at before the figures were printed. Both parts are
printed and labelled.

Time per commit: what the bot spends per upstream commit (its changed paths, and the merge when it
touches a patched file), wall clock, on this machine; per-digest fixed costs (merge base, the
fork's patches) are printed apart.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.fork.conflict import cherry_pick_conflicts, default_mode  # noqa: E402
from bot.fork.git import ObjectView, git_version  # noqa: E402
from bot.fork.patches import read_patches  # noqa: E402


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, predicted: bool, truth: bool) -> None:
        if predicted and truth:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif truth:
            self.fn += 1
        else:
            self.tn += 1

    def merge(self, other: Tally) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class MergeResult:
    merge: str
    date: str
    commits: int
    sampled: int
    conflicted_files: int
    patched_files: int
    bot: Tally = field(default_factory=Tally)
    touches: Tally = field(default_factory=Tally)
    bot_lines: Tally = field(default_factory=Tally)  # against the line-level truth
    touches_lines: Tally = field(default_factory=Tally)
    ms: list[float] = field(default_factory=list)
    fixed_ms: float = 0.0


def upstream_merges(view: ObjectView, branch: str, subject: str) -> list[tuple[str, str, str, str]]:
    """(merge, P1, P2, date) oldest first."""
    out = view.out("log", "--merges", "--reverse", "--format=%H%x00%P%x00%cs%x00%s", branch)
    merges = []
    for row in out.splitlines():
        sha, parents, date, title = row.split("\0", 3)
        parents = parents.split()
        if len(parents) == 2 and title.startswith(subject):
            merges.append((sha, parents[0], parents[1], date))
    return merges


def conflicted_files(view: ObjectView, p1: str, p2: str) -> tuple[str, set[str]]:
    """(result tree, paths that conflict) of merging P2 into P1 again."""
    proc = view.run("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", p1, p2, ok=(0, 1))
    parts = proc.stdout.split(b"\0")
    tree = parts[0].decode().strip()
    if proc.returncode == 0:
        return tree, set()
    return tree, {p.decode("utf-8", "replace") for p in parts[1:] if p}


def _theirs_blocks(text: str) -> list[list[str]]:
    """The upstream side (between ======= and >>>>>>>) of each conflict region of a merged file."""
    blocks, current, inside = [], [], False
    for line in text.split("\n"):
        if line.startswith("=======") and not inside:
            inside, current = True, []
        elif line.startswith(">>>>>>>") and inside:
            blocks.append(current)
            inside = False
        elif inside:
            current.append(line)
    return blocks


def blamed_commits(view: ObjectView, tree: str, files: set[str], p2: str, base: str) -> tuple[set[str], set[str]]:
    """Line-level truth: the upstream commits that last wrote a line of the upstream side of a
    conflict region (git blame base..P2). Files whose conflicts cannot be attributed that way (a
    modify/delete conflict, an upstream side that only deleted lines) are returned apart."""
    blamed: set[str] = set()
    unattributed: set[str] = set()
    for path in files:
        merged = view.run("cat-file", "-p", f"{tree}:{path}", ok=(0, 128))
        theirs = view.run("cat-file", "-p", f"{p2}:{path}", ok=(0, 128))
        blocks = _theirs_blocks(merged.stdout.decode("utf-8", "replace")) if merged.returncode == 0 else []
        lines = theirs.stdout.decode("utf-8", "replace").split("\n") if theirs.returncode == 0 else []
        if not blocks or not lines:
            unattributed.add(path)
            continue
        for block in blocks:
            if not block:
                unattributed.add(path)
                continue
            start = next((i for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block), None)
            if start is None:
                unattributed.add(path)
                continue
            out = view.out(
                "blame", "--porcelain", "-L", f"{start + 1},{start + len(block)}", f"{base}..{p2}", "--", path
            )
            for row in out.splitlines():
                head = row.split(" ", 1)[0]
                if len(head) == 40 and all(c in "0123456789abcdef" for c in head):
                    blamed.add(head)
    return blamed, unattributed


def evenly(items: list[str], n: int) -> list[str]:
    if n <= 0 or len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def run_merge(view: ObjectView, merge: str, p1: str, p2: str, date: str, per_merge: int, mode: str) -> MergeResult:
    tree, truth_files = conflicted_files(view, p1, p2)
    commits = view.out("rev-list", "--no-merges", p2, f"^{p1}").split()
    sample = evenly(commits, per_merge)
    blamed, unattributed = blamed_commits(view, tree, truth_files, p2, view.merge_base(p1, p2))
    started = time.perf_counter()
    base = view.merge_base(p1, p2)
    patches = read_patches(view, base, p1)
    fixed = (time.perf_counter() - started) * 1000
    result = MergeResult(merge, date, len(commits), len(sample), len(truth_files), len(patches.hunks), fixed_ms=fixed)
    for sha in sample:
        t0 = time.perf_counter()
        parent = view.first_parent(sha)
        touched = view.touched_paths(sha, parent)
        hit = patches.touched(touched)
        predicted = bool(hit) and cherry_pick_conflicts(view, sha, p1, parent=parent, mode=mode).conflict
        result.ms.append((time.perf_counter() - t0) * 1000)
        truth = bool(touched & truth_files)
        result.bot.add(predicted, truth)
        result.touches.add(bool(hit), truth)
        strict = sha in blamed or bool(touched & unattributed)
        result.bot_lines.add(predicted, strict)
        result.touches_lines.add(bool(hit), strict)
    return result


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def report(label: str, results: list[MergeResult]) -> None:
    bot, touches, bot_lines, touches_lines = Tally(), Tally(), Tally(), Tally()
    ms: list[float] = []
    for r in results:
        bot.merge(r.bot)
        touches.merge(r.touches)
        bot_lines.merge(r.bot_lines)
        touches_lines.merge(r.touches_lines)
        ms += r.ms
    conflicting = sum(1 for r in results if r.conflicted_files)
    print(
        f"\n{label}: {len(results)} merges ({conflicting} with conflicts), {len(ms)} upstream commits "
        f"({sum(r.commits for r in results)} brought in)"
    )
    for truth, b, t in (
        ("file-level truth (C touches a file that conflicted in M)", bot, touches),
        ("line-level truth (C last wrote a line of a conflict region's upstream side)", bot_lines, touches_lines),
    ):
        print(f"  {truth}:")
        print(
            f"    bot (touches a patched file AND cherry-pick onto P1 conflicts): precision {fmt(b.precision)}  "
            f"recall {fmt(b.recall)}  (tp {b.tp} fp {b.fp} fn {b.fn} tn {b.tn})"
        )
        print(
            f"    baseline (touches a patched file):                            precision {fmt(t.precision)}  "
            f"recall {fmt(t.recall)}  (tp {t.tp} fp {t.fp} fn {t.fn} tn {t.tn})"
        )
    if ms:
        ordered = sorted(ms)
        print(
            f"  time per commit: mean {statistics.mean(ms):.1f} ms, median {statistics.median(ms):.1f} ms, "
            f"p95 {ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms; per digest (merge base + fork patches): "
            f"mean {statistics.mean(r.fixed_ms for r in results):.0f} ms"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--fork-git",
        default=os.environ.get("BENCH_DOWNSTREAM_FORK"),
        help="git directory of the fork (or $BENCH_DOWNSTREAM_FORK)",
    )
    ap.add_argument("--branch", default="habana_main")
    ap.add_argument("--merge-subject", default="Merge remote-tracking branch 'upstream/main'")
    ap.add_argument("--per-merge", type=int, default=150, help="upstream commits sampled per merge (0: all)")
    ap.add_argument("--max-merges", type=int, default=0, help="newest N merges only (0: all)")
    ap.add_argument("--held-out", type=float, default=0.5, help="share of the oldest merges held out")
    ap.add_argument("--mode", default=None, help="merge-base | synthetic | trivial (default: what this git supports)")
    ap.add_argument("--verbose", action="store_true", help="one line per merge")
    args = ap.parse_args()
    if not args.fork_git or not os.path.isdir(args.fork_git):
        print(
            "No fork repository: pass --fork-git GIT_DIR or set BENCH_DOWNSTREAM_FORK (e.g. a mirror of "
            "HabanaAI/vllm-fork). Nothing measured."
        )
        return 0
    mode = args.mode or default_mode()
    with ObjectView(args.fork_git, timeout=600) as view:
        merges = upstream_merges(view, args.branch, args.merge_subject)
        if args.max_merges:
            merges = merges[-args.max_merges :]
        if not merges:
            print(f"No merge on {args.branch} has a subject starting with {args.merge_subject!r}.")
            return 1
        print(
            f"git {'.'.join(map(str, git_version()))}, mode {mode}; {len(merges)} upstream merges on {args.branch} "
            f"({merges[0][3]} … {merges[-1][3]}), up to {args.per_merge or 'all'} commits each"
        )
        cut = round(len(merges) * args.held_out)  # merges[:cut], the oldest, are held out
        results = []
        for i, (merge, p1, p2, date) in enumerate(merges):
            r = run_merge(view, merge, p1, p2, date, args.per_merge, mode)
            results.append(r)
            if args.verbose:
                print(
                    f"  {'held-out' if i < cut else 'dev     '} {date} {merge[:9]}: {r.commits} commits "
                    f"({r.sampled} sampled), {r.conflicted_files} files conflicted, fork patches {r.patched_files}; "
                    f"bot tp {r.bot.tp} fp {r.bot.fp} fn {r.bot.fn}",
                    flush=True,
                )
    report(f"HELD-OUT part (oldest {cut} merges; not looked at before this run)", results[:cut])
    report(f"development part (newest {len(results) - cut} merges; looked at while building)", results[cut:])
    report("all merges", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

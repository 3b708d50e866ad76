"""How well bot/redact/ withholds secrets: recall on public secret-scanner suites (all its rules,
then each vendor's own rules left out), false redactions on ordinary code. Everything is read from
fetched mirrors at run time (bench/secret_corpora.py); nothing taken from them is stored here.

    python bench/eval_secrets.py --mirrors DIR [--days 14] [--show-misses 20] [--show-false 50]

DIR (or $SECRETS_MIRRORS) holds bare git directories named owner+name/repo, as the search tool's
`fetch` leaves them; without one the script says so and exits 0. Corpora, each skipped with one
line when its mirror is missing:
  Yelp+detect-secrets     its plugin tests' positives (needs pyyaml, requests, responses)  in-sample
  gitleaks+gitleaks       every rule's samples; and its vendor shapes alone on a line       in-sample
  praetorian-inc+noseyparker  the default rules' examples and negative examples, split by vendor
                          (bench/secret_corpora.np_split): the tune half, and the held-out half
                          whose misses are shown only with --show-heldout
  mongodb+kingfisher      the examples of rules for vendors without a Nosey Parker rule, split by
                          vendor (bench/secret_corpora.kf_split): tune half, held-out half
  secretlint+secretlint   its rules' ng/ok snapshots                                        held out
  astral-sh+uv, astral-sh+ruff, pydantic+pydantic-ai
                          ordinary code: the added lines of every commit in the last --days days
                          before the newest commit, files the bot would send only.

Leave-one-vendor-out: each case is redacted again with the shape rules written for its vendor
left out (bot.redact.redactor), so only the generic detectors and other vendors' rules can catch
it; "no vendor rule" leaves every vendor's rules out at once.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from secret_corpora import (
    Case,
    detect_secrets_cases,
    git,
    gitleaks_cases,
    kf_split,
    kingfisher_cases,
    noseyparker_cases,
    np_split,
    secretlint_cases,
)

from bot.core.models import FileChange
from bot.diffs import skip_reason
from bot.redact import MARK_PREFIX, redact, redactor, vendor_names

NEGATIVE_REPOS = ("astral-sh+uv", "astral-sh+ruff", "pydantic+pydantic-ai")
VENDORS = vendor_names()
_NO_VENDOR_RULE = redactor(VENDORS)
_LEFT_OUT: dict[str, Callable] = {}


def withheld(text: str, secret: str, redact_fn: Callable = redact) -> bool:
    """Is the secret gone from what would be sent?"""
    return secret not in redact_fn(text).text


def without_own_rules(vendor: str) -> Callable:
    """redact() less the rules written for `vendor` (redact() itself when none was)."""
    if vendor not in VENDORS:
        return redact
    if vendor not in _LEFT_OUT:
        _LEFT_OUT[vendor] = redactor([vendor])
    return _LEFT_OUT[vendor]


# =============================================================================================
# ordinary code
# =============================================================================================


def negative_corpus(repo: Path, days: int, offset: int = 0) -> tuple[int, int, list[str], int]:
    """(added lines sent, false redactions, examples, commits) over `days` days ending `offset`
    days before the newest commit."""
    newest = int(git(repo, "log", "-1", "--format=%ct", "HEAD").decode()) - offset * 86400
    log = git(
        repo,
        "log",
        "--no-merges",
        "-p",
        "--no-color",
        "--no-ext-diff",
        "--format=%x00%H%n%B%x01",
        f"--since={newest - days * 86400}",
        f"--until={newest}",
        "HEAD",
    ).decode("utf-8", "replace")
    lines = flagged = commits = 0
    examples: list[str] = []
    for chunk in log.split("\x00")[1:]:
        commits += 1
        message, _, patch = chunk.partition("\x01")
        texts = [message]
        for part in re.split(r"\ndiff --git ", "\n" + patch)[1:]:
            m = re.match(r"a/(\S+) b/(\S+)", part)
            if not m:
                continue
            path = m.group(2)
            body = part[part.find("\n@@") :] if "\n@@" in part else ""
            f = FileChange(
                path=path,
                status="modified",
                additions=0,
                deletions=0,
                patch=body or None,
                binary="Binary files" in part[:400],
            )
            if skip_reason(f) is None and body:
                texts.append(path + "\n" + body)
        for text in texts:
            result = redact(text)
            is_message = text is message
            for before, after in zip(text.split("\n"), result.text.split("\n")):
                counted = is_message or (before.startswith("+") and not before.startswith("+++"))
                lines += counted
                if counted and after != before:
                    flagged += after.count(MARK_PREFIX) - before.count(MARK_PREFIX)
                    examples.append(f"{before[:160]}\n           -> {after[:160]}")
            if result.text.count("\n") != text.count("\n"):  # a block (PEM) was replaced: count it
                flagged += result.count
                examples.append(text[:160])
    return lines, flagged, examples, commits


# =============================================================================================
# reports
# =============================================================================================


def report(name: str, cases: list[Case], show: int, per_rule: bool = False, lovo: bool = True) -> None:
    """Recall, then leave-one-vendor-out recall; misses listed only when `show`."""
    if not cases:
        print(f"{name}: no cases")
        return
    missed = [c for c in cases if not withheld(c.text, c.secret)]
    caught = len(cases) - len(missed)
    extra = ""
    if per_rule:
        by_rule = defaultdict(lambda: [0, 0])
        for c in cases:
            by_rule[c.source][1] += 1
        for c in missed:
            by_rule[c.source][0] += 1
        full = sum(1 for missed_n, _ in by_rule.values() if missed_n == 0)
        extra = f"; every sample of {full}/{len(by_rule)} rules"
    vendors = {c.vendor for c in cases}
    print(f"{name}: recall {caught}/{len(cases)} = {_pct(caught, len(cases))}{extra}; {len(vendors)} vendors")
    if lovo:
        lovo_missed = [c for c in cases if not withheld(c.text, c.secret, without_own_rules(c.vendor))]
        own = [c for c in cases if c.vendor in VENDORS]
        own_missed = [c for c in lovo_missed if c.vendor in VENDORS]
        bare_missed = [c for c in cases if not withheld(c.text, c.secret, _NO_VENDOR_RULE)]
        n = len(cases)
        print(
            f"    leave-one-vendor-out: {n - len(lovo_missed)}/{n} = {_pct(n - len(lovo_missed), n)} "
            f"(the {len(own)} cases of the {len({c.vendor for c in own})} vendors with rules of their own: "
            f"{len(own) - len(own_missed)}/{len(own)} = {_pct(len(own) - len(own_missed), len(own))}); "
            f"no vendor rule at all: {n - len(bare_missed)}/{n} = {_pct(n - len(bare_missed), n)}"
        )
        # a left-out vendor caught by another vendor's rule: a check on the rules' vendor labels
        borrowed = Counter(c.vendor for c in own if c not in lovo_missed and c in bare_missed)
        if borrowed and show:
            print(
                "    caught by another vendor's rule when left out:",
                ", ".join(f"{v} {k}" for v, k in borrowed.most_common(12)),
            )
    if not show:
        return
    _misses("missed", missed, show)
    if lovo:
        _misses("missed, own rules left out", [c for c in lovo_missed if c not in missed], show)


def _misses(label: str, missed: list[Case], show: int) -> None:
    kinds = Counter(c.source for c in missed)
    if kinds:
        print(f"    {label}, by source:", ", ".join(f"{k} {n}" for k, n in kinds.most_common(12)))
    for c in missed[:show]:
        print(f"    {label} [{c.source}] {c.text[:200]!r}")


def report_negatives(name: str, cases: list[Case], show: int) -> None:
    changed = [c for c in cases if redact(c.text).text != c.text]
    print(f"{name}: {len(changed)} of {len(cases)} changed")
    for c in changed[:show]:
        print(f"    changed [{c.source}] {c.text[:160]!r}\n           -> {redact(c.text).text[:160]!r}")


def _pct(a: int, b: int) -> str:
    return f"{100 * a / max(b, 1):.1f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--mirrors",
        default=os.environ.get("SECRETS_MIRRORS"),
        help="directory of fetched mirrors (or $SECRETS_MIRRORS)",
    )
    parser.add_argument("--days", type=int, default=14, help="days of ordinary code per negative repository")
    parser.add_argument(
        "--offset-days",
        type=int,
        default=0,
        help="end the ordinary-code window this many days before the newest commit (held-out runs)",
    )
    parser.add_argument(
        "--ordinary",
        default=",".join(NEGATIVE_REPOS),
        help="mirrors of ordinary code, comma-separated (default: uv, ruff, pydantic-ai; "
        "pydantic+pydantic,python+mypy,pytest-dev+pytest,HabanaAI+vllm-fork were never tuned on)",
    )
    parser.add_argument("--only-ordinary", action="store_true", help="measure false redactions only")
    parser.add_argument("--show-misses", type=int, default=15)
    parser.add_argument("--show-false", type=int, default=30)
    parser.add_argument(
        "--show-heldout", action="store_true", help="also list the held-out corpora's misses (after tuning is over)"
    )
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    if not args.mirrors:
        print("no mirrors given (--mirrors DIR or $SECRETS_MIRRORS); nothing measured")
        return 0
    root = Path(args.mirrors)
    show, held_show = args.show_misses, (args.show_misses if args.show_heldout else 0)

    if not args.only_ordinary:
        ds = root / "Yelp+detect-secrets" / "repo"
        if ds.is_dir():
            try:
                cases = detect_secrets_cases(ds)
            except ImportError as exc:
                print(f"detect-secrets: skipped, its plugins need {exc.name} (pip install pyyaml requests responses)")
            else:
                report("detect-secrets plugin tests [in-sample]", cases, show)
        else:
            print(f"detect-secrets: no mirror at {ds}; skipped")

        gl = root / "gitleaks+gitleaks" / "repo"
        if gl.is_dir():
            cases, bare = gitleaks_cases(gl, random.Random(args.seed))
            report("gitleaks rules [in-sample]", cases, show, per_rule=True)
            report("gitleaks vendor shapes, no name on the line [in-sample]", bare, show, per_rule=True)
        else:
            print(f"gitleaks: no mirror at {gl}; skipped")

        npr = root / "praetorian-inc+noseyparker" / "repo"
        if npr.is_dir():
            positives, negatives, unreadable = noseyparker_cases(npr)
            for part, shown in (("tune", show), ("held-out", held_show)):
                report(
                    f"Nosey Parker examples, {part} half [{'in-sample' if part == 'tune' else 'HELD OUT'}]",
                    [c for c in positives if np_split(c.vendor) == part],
                    shown,
                )
                report_negatives(
                    f"Nosey Parker negative examples, {part} half",
                    [c for c in negatives if np_split(c.vendor) == part],
                    shown,
                )
            if unreadable:
                print(f"    ({unreadable} examples left out: their rule's pattern does not convert to Python)")
        else:
            print(f"noseyparker: no mirror at {npr}; skipped")

        kf = root / "mongodb+kingfisher" / "repo"
        if kf.is_dir():
            positives, unreadable = kingfisher_cases(kf, npr if npr.is_dir() else None)
            for part, shown in (("tune", show), ("held-out", held_show)):
                report(
                    f"Kingfisher examples, vendors without a Nosey Parker rule, {part} half "
                    f"[{'in-sample' if part == 'tune' else 'HELD OUT'}]",
                    [c for c in positives if kf_split(c.vendor) == part],
                    shown,
                )
            if unreadable:
                print(f"    ({unreadable} examples left out: their rule's pattern does not convert to Python)")
        else:
            print(f"kingfisher: no mirror at {kf}; skipped")

        sl = root / "secretlint+secretlint" / "repo"
        if sl.is_dir():
            positives, negatives = secretlint_cases(sl)
            report("secretlint rule fixtures [HELD OUT]", positives, held_show)
            report_negatives("secretlint ok fixtures", negatives, held_show)
        else:
            print(f"secretlint: no mirror at {sl}; skipped")

    total_lines = total_flagged = 0
    for name in args.ordinary.split(","):
        repo = root / name / "repo"
        if not repo.is_dir():
            print(f"{name}: no mirror at {repo}; skipped")
            continue
        try:
            lines, flagged, examples, commits = negative_corpus(repo, args.days, args.offset_days)
        except subprocess.CalledProcessError as exc:
            print(
                f"{name}: its history for that window cannot be read "
                f"({exc.stderr.decode(errors='replace').strip()[:80]}); skipped"
            )
            continue
        total_lines += lines
        total_flagged += flagged
        print(
            f"ordinary code {name.replace('+', '/')} (days -{args.offset_days + args.days}..-{args.offset_days}): "
            f"{commits} commits, {lines} added lines, {flagged} false redactions "
            f"({flagged * 10000 / max(lines, 1):.2f} per 10,000 lines)"
        )
        for line in examples[: args.show_false]:
            print("    false:", line)
    if total_lines:
        print(
            f"ordinary code, all: {total_flagged} false redactions in {total_lines} added lines "
            f"= {total_flagged * 10000 / total_lines:.2f} per 10,000"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Would a learned cross-repository prior over the rules' evidence judge levels better than the
rules alone? Leave-one-repository-out cross-validation over the labelled sets (issue 33, round 4).

  python bench/cv_prior.py --mirrors DIR [--labels FILE ...] [--by repo|set] [--rows CACHE.json]

Each labelled commit is read from its mirror as `bench/eval_importance.py` reads it and judged by
the rules alone (no learned profile); the rules' evidence — the facts that fired and the one that
decided, the ceiling, the change type, the kinds of file, sizes, public names added, removed or
renamed, flags, defaults, the title's cues, where in the tree the source changes — becomes a
commit's binary words (`features`). No repository name, path or title word is a feature: the prior
is meant to carry across repositories. For each repository in turn a model is fitted on the other
repositories' commits and decides the held-out one's levels where the rules are not firm (firm: a
high from a declared breaking change, a security fix, a removal of public API or flags, a changed
default; a ceiling nothing that ships passes). Printed per held-out repository and as the mean
over folds: 3-level κ, exact agreement, above-low recall, missed highs, for the rules alone and
rules + prior — first the prior as designed before any run (a 3-class logistic regression whose
most probable level replaces a level the rules are not firm about), then the variants tried after
it (raise or lower only, a margin, a random forest): those were chosen looking at these same
figures, so the best of them is optimistic.

The result of 2026-12-06 (docs/benchmarks.md, round 4): no variant beats the rules alone, so no
prior ships. The rules-only figures are themselves in-sample on 8 of the 10 repositories (the
rules were revised on them), which favours the rules; see the docs for what that means.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval_importance import mirrored_sources  # noqa: E402  (bench/ is on the path: this script's folder)

from bot.analysis.offline import read_context  # noqa: E402
from bot.analysis.offline.context import Context, Fact  # noqa: E402
from bot.analysis.offline.decide import by_rules  # noqa: E402
from bot.analysis.offline.paths import FileKind  # noqa: E402
from bot.core.models import Importance  # noqa: E402
from bot.evaluation.card import load_labels, mirrors_dir, read_cases  # noqa: E402
from bot.taste.scores import cohen_kappa  # noqa: E402

DATA = ROOT / "tests" / "data"
LABEL_SETS = [
    DATA / "importance_labels.jsonl",
    DATA / "importance_labels_heldout.jsonl",
    DATA / "importance_labels_blind.jsonl",
    DATA / "importance_labels_blind2.jsonl",
    DATA / "importance_labels_blind3.jsonl",
    DATA / "importance_labels_blind4.jsonl",
    DATA / "importance_labels_blind5.jsonl",
    DATA / "importance_labels_blind6.jsonl",
    DATA / "importance_labels_blind7.jsonl",
]
C = 0.3  # L2 strength, fixed before the first cross-validated run (a few hundred commits, many words)

# Phrases of facts no prior may overrule: a high they ask for stays high.
FIRM_HIGH = ("offline.breaking.", "offline.security.", "offline.removal.", "offline.behaviour.default")


def _bucket(n: int, edges: Sequence[int]) -> int:
    return next((i for i, edge in enumerate(edges) if n <= edge), len(edges))


def features(
    c: Context, found: Sequence[Fact], cap: Fact | None, level: Importance, reasons: Sequence[Fact]
) -> list[str]:
    """The commit as binary words over what the rules observed: the same words in training
    (bench/train_prior.py) and in a digest. No repository name, path or title word: the prior is
    meant to carry across repositories."""
    stats, diff, title = c.stats, c.diff, c.title
    out = [f"rule={level.value}", f"type={c.ctype.value}"]
    out += [f"reason={f.said.key}" for f in reasons if hasattr(f.said, "key")]
    out += sorted({f"fact={f.said.key}:{f.level.value}" for f in found if hasattr(f.said, "key")})
    if cap is not None and hasattr(cap.said, "key"):
        out.append(f"cap={cap.said.key}")
    kinds = {k for _, k in stats.files}
    out += [f"kind={k.value}" for k in sorted(kinds, key=lambda k: k.value)]
    if kinds and kinds <= {FileKind.TEST}:
        out.append("only=tests")
    if kinds and kinds <= {FileKind.DOCS}:
        out.append("only=docs")
    if FileKind.SOURCE in kinds and kinds & {FileKind.TEST}:
        out.append("source+tests")
    src = stats.source_lines
    out.append(f"src_lines={_bucket(src, (0, 5, 20, 80, 300, 1000))}")
    out.append(f"files={_bucket(stats.total_files, (1, 3, 10, 30))}")
    out.append(f"src_files={_bucket(len(stats.source), (0, 1, 3, 10))}")
    if stats.added_source:
        out.append("adds_source_file")
    if stats.removed_source:
        out.append("removes_source_file")
    adds, dels = stats.lines(FileKind.SOURCE)
    if src and dels > 2 * adds:
        out.append("mostly_deletes")
    if src and adds > 4 * max(dels, 1):
        out.append("mostly_adds")
    added_defs = sum(len(d.added) for d in diff.deltas)
    changed_defs = sum(len(d.changed) for d in diff.deltas)
    out.append(f"added_defs={_bucket(added_defs, (0, 2, 6))}")
    out.append(f"changed_defs={_bucket(changed_defs, (0, 2, 6))}")
    for name, value in (
        ("removed_api", diff.removed_api),
        ("renamed_api", diff.renamed_api),
        ("removed_flags", diff.removed_flags),
        ("added_flags", diff.added_flags),
        ("default_changes", diff.default_changes),
        ("major_bumps", diff.major_bumps),
        ("shipped_deps", diff.shipped_dep_changes),
        ("refusals", diff.refusals),
        ("gpu_kernels", diff.gpu_kernels),
        ("moved_modules", diff.moved_modules),
        ("removed_surface", diff.removed_surface_files),
        ("release_edits", diff.release_edits),
        ("surface", diff.surface_kinds),
        ("tests_added", diff.tests_added),
        ("env_added", diff.env_added),
        ("pins", diff.pins),
        ("dev_only_deps", diff.dev_only_deps),
    ):
        if value:
            out.append(f"diff={name}")
    out += [f"surface={s}" for s in diff.surface_kinds]
    for name in (
        "strong",
        "breaking",
        "cosmetic",
        "security",
        "security_mention",
        "default_change",
        "crash",
        "pathology",
        "preserving",
        "release",
        "hardening",
        "clearer_error",
        "squashed_revert",
        "ci_declared",
    ):
        if getattr(title, name):
            out.append(f"title={name}")
    for name in ("rejects", "guard", "runtime_support", "wrong_output", "interface_change", "bump"):
        if getattr(title, name):
            out.append(f"title={name}")
    if title.tags:
        out.append("title=tagged")
    if c.commit.body.strip():
        out.append("has_body")
    out += _where(c)
    return out


_AREAS = (
    "example",
    "script",
    "benchmark",
    "bench",
    "util",
    "internal",
    "experimental",
    "contrib",
    "kernel",
    "csrc",
    "cuda",
    "config",
    "cli",
    "api",
    "model",
    "trainer",
    "tuner",
    "quant",
    "serve",
    "engine",
    "doc",
    "test",
)


def _where(c: Context) -> list[str]:
    """Where in the tree the shipped source changes, as generic words: how deep, private or public
    names, a few area words that mean the same in any project."""
    out = set()
    for f in c.stats.source:
        parts = f.path.lower().split("/")
        out.add(f"depth={min(len(parts), 5)}")
        if any(p.startswith("_") and not p.startswith("__") for p in parts):
            out.add("private_module")
        if parts[-1] == "__init__.py":
            out.add("init_module")
        for area in _AREAS:
            if any(area in p for p in parts[:-1]):
                out.add(f"area={area}")
    names = [n for d in c.diff.deltas for n in (*d.added, *d.removed, *d.changed)]
    if names and all(n.split(".")[-1].startswith("_") for n in names):
        out.add("only_private_names")
    if any(not n.split(".")[-1].startswith("_") for d in c.diff.deltas for n in d.added):
        out.add("adds_public_name")
    return sorted(out)


def firm(found: Sequence[Fact], cap: Fact | None, level: Importance, reasons: Sequence[Fact]) -> bool:
    """Whether the rules' level stands whatever the prior says."""
    if cap is not None and cap.firm and cap.level is level:
        return True  # nothing that ships changes
    if level is Importance.HIGH:
        return any(hasattr(f.said, "key") and f.said.key.startswith(FIRM_HIGH) for f in reasons)
    return False


# --- reading the labelled commits ---------------------------------------------------------------------


async def read_rows(label_files: list[Path], mirrors: Path) -> list[dict]:
    """One row per labelled commit: its repository, label, the rules' level, whether it is firm, its words."""
    sets = {}
    labels = []
    for f in label_files:
        for label in load_labels(f):
            labels.append(label)
            sets[(label.repo, label.sha)] = f.stem
    sources = mirrored_sources(labels, mirrors)
    rows = []
    for case in await read_cases(labels, sources, None, learn=False):
        ctx = read_context(case.commit, case.files, case.profile, None)
        found, cap, verdict = by_rules(ctx)
        rows.append(
            {
                "repo": case.label.repo,
                "set": sets[(case.label.repo, case.label.sha)],
                "label": case.label.level,
                "rules": verdict.level.value,
                "firm": firm(found, cap, verdict.level, verdict.reasons),
                "words": features(ctx, found, cap, verdict.level, verdict.reasons),
            }
        )
    return rows


# --- the models and how they combine with the rules ---------------------------------------------------


def _x(vec, rows: list[dict]):
    return vec.transform([dict.fromkeys(r["words"], 1) for r in rows])


def designed(train: list[dict], test: list[dict]) -> list[str]:
    """As designed before any run: a 3-class logistic regression (L2, C, balanced classes); its most
    probable level replaces every level the rules are not firm about."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = DictVectorizer().fit([dict.fromkeys(r["words"], 1) for r in train])
    model = LogisticRegression(C=C, max_iter=2000, class_weight="balanced")
    model.fit(_x(vec, train), [r["label"] for r in train])
    chosen = model.classes_[model.predict_proba(_x(vec, test)).argmax(axis=1)]
    return [r["rules"] if r["firm"] else str(level) for r, level in zip(test, chosen, strict=True)]


def variant(kind: str, margin: float, up: bool, down: bool):
    """Tried after the designed prior: low vs above-low only (a high stays the rules'), moving a level
    only when the prior's P(above low) is past 0.5 by `margin`, raising only, lowering only or both."""

    def judge(train: list[dict], test: list[dict]) -> list[str]:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression

        vec = DictVectorizer().fit([dict.fromkeys(r["words"], 1) for r in train])
        model = (
            LogisticRegression(C=C, max_iter=2000, class_weight="balanced")
            if kind == "logistic"
            else RandomForestClassifier(n_estimators=200, min_samples_leaf=3, random_state=0, class_weight="balanced")
        )
        model.fit(_x(vec, train), ["low" if r["label"] == "low" else "above" for r in train])
        above = model.predict_proba(_x(vec, test))[:, list(model.classes_).index("above")]
        out = []
        for r, p in zip(test, above, strict=True):
            level = r["rules"]
            if not r["firm"] and level != "high":
                if up and level == "low" and p >= 0.5 + margin:
                    level = "medium"
                elif down and level == "medium" and p < 0.5 - margin:
                    level = "low"
            out.append(level)
        return out

    return judge


# --- scores -------------------------------------------------------------------------------------------


def figures(labels: list[str], levels: list[str]) -> dict:
    pairs = list(zip(labels, levels, strict=True))
    above = [b for a, b in pairs if a != "low"]
    return {
        "n": len(pairs),
        "kappa": cohen_kappa(pairs),
        "exact": sum(a == b for a, b in pairs),
        "recall": (sum(b != "low" for b in above), len(above)),
        "missed_highs": sum(a == "high" and b != "high" for a, b in pairs),
    }


def show(f: dict) -> str:
    hit, total = f["recall"]
    rec = f"{hit}/{total} ({hit / total:.0%})" if total else "n/a"
    return (
        f"κ3 {f['kappa']:.2f} · exact {f['exact']}/{f['n']} · above-low recall {rec} · missed highs {f['missed_highs']}"
    )


def folds(rows: list[dict], judge, by: str = "repo") -> list[tuple[str, list[str], list[str], list[str]]]:
    """(held-out repository or set, labels, rules' levels, rules + prior) for each in turn."""
    out = []
    for repo in dict.fromkeys(r[by] for r in rows):
        test = [r for r in rows if r[by] == repo]
        train = [r for r in rows if r[by] != repo]
        out.append((repo, [r["label"] for r in test], [r["rules"] for r in test], judge(train, test)))
    return out


def mean(fs: list[dict]) -> tuple[float, float, int]:
    """(mean κ3, mean above-low recall over the folds that have one, missed highs summed)."""
    recalls = [f["recall"][0] / f["recall"][1] for f in fs if f["recall"][1]]
    return sum(f["kappa"] for f in fs) / len(fs), sum(recalls) / len(recalls), sum(f["missed_highs"] for f in fs)


def report(rows: list[dict], by: str = "repo") -> None:
    print(
        f"{len(rows)} labelled commits, {dict(Counter(r['label'] for r in rows))}; rules firm on {sum(r['firm'] for r in rows)}"
    )
    what = "repository" if by == "repo" else "set"
    print(f"\nthe prior as designed, leave-one-{what}-out (fitted on the others):\n")
    results = folds(rows, designed, by)
    for repo, labels, rules, prior in results:
        print(f"{repo:<28}{len(labels):>4}  rules only     {show(figures(labels, rules))}")
        print(f"{'':<34}rules + prior  {show(figures(labels, prior))}")
    fr = [figures(labels, rules) for _, labels, rules, _ in results]
    fp = [figures(labels, prior) for _, labels, _, prior in results]
    for name, fs in (("rules only", fr), ("rules + prior", fp)):
        k, rec, missed = mean(fs)
        print(f"mean over {len(fs)} folds, {name}: κ3 {k:.2f} · above-low recall {rec:.0%} · missed highs {missed}")
    moved = Counter((r, p) for _, _, rules, prior in results for r, p in zip(rules, prior, strict=True) if r != p)
    print(f"levels moved (rules → prior): {dict(moved)}")

    print("\nvariants tried after it (chosen looking at these figures: the best is optimistic):")
    print(f"{'model':<10}{'margin':>7}  {'moves':<6} mean κ3 · recall · missed highs")
    for kind in ("logistic", "forest"):
        for margin in (0.0, 0.1, 0.2, 0.3):
            for up, down, name in ((True, True, "both"), (True, False, "raise"), (False, True, "lower")):
                fs = [
                    figures(labels, prior) for _, labels, _, prior in folds(rows, variant(kind, margin, up, down), by)
                ]
                k, rec, missed = mean(fs)
                print(f"{kind:<10}{margin:>7.1f}  {name:<6} {k:.3f} · {rec:.1%} · {missed}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--mirrors", help="directory holding <owner>+<name>/repo git mirrors (default $DIGEST_EVAL_MIRRORS)"
    )
    parser.add_argument("--labels", nargs="*", default=[str(p) for p in LABEL_SETS])
    parser.add_argument(
        "--by", choices=("repo", "set"), default="repo", help="leave one repository or one labelled set out"
    )
    parser.add_argument("--rows", help="keep the extracted rows here between runs (read when it exists)")
    args = parser.parse_args(argv)
    if args.rows and Path(args.rows).exists():
        rows = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        mirrors = mirrors_dir(args.mirrors)
        if mirrors is None or not mirrors.is_dir():
            print("no mirrors given (--mirrors DIR or $DIGEST_EVAL_MIRRORS): nothing to cross-validate")
            return 0
        rows = asyncio.run(read_rows([Path(p) for p in args.labels], mirrors))
        if args.rows:
            Path(args.rows).write_text(json.dumps(rows), encoding="utf-8")
    report(rows, args.by)
    return 0


if __name__ == "__main__":
    sys.exit(main())

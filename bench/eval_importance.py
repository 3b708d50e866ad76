"""How far the offline analyser agrees with a maintainer: a labelled set of real commits.

  python bench/eval_importance.py [--mirrors DIR] [--labels FILE] [--learned] [--show]

`tests/data/importance_labels.jsonl` holds one line per commit — repo, sha, the level and change
type a maintainer gave it from its diff (before the bot's label was looked at), and a one-line
reason. Only these labels live in the repository: the commits themselves are read at run time from
fetched mirrors of the public repositories (`DIR/<owner>+<name>/repo`, from `--mirrors DIR` or
$DIGEST_EVAL_MIRRORS; there is no default), through the bot's own local git source — the same
loading code as `python -m bot eval` (bot/evaluation/card.py) — and analysed by the offline analyser
exactly as a digest would. Without mirrors it says so in one line; when one repository's mirror is
absent, its commits are skipped with a line saying so (exit 0 both: CI has no mirrors). The card of
`python -m bot eval` is the operator's version: both analysers, and a missing mirror is an error.

Printed first, one line each: the rules alone and — with `--learned` — the analyser as digests
judge (rules + each repository's learned profile, where its release notes can be learned): 3-level
κ, exact agreement, above-low recall (labelled medium or high, rated above low) and missed highs.
A new labelled file is scored once with `--labels FILE --learned`. Then: the confusion matrix (rows: the maintainer, columns: the bot), Cohen's κ, the low vs
above-low agreement, agreement on the commits either side rates above low, the missed highs, clipped summaries (cut mid-sentence or
ending with "…", in both languages) and the share of the three most common risk templates among
all risk lines.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.analysis.offline import analyse_offline  # noqa: E402
from bot.core.models import BotError, Importance  # noqa: E402
from bot.evaluation.card import MIRRORS_ENV, load_labels, mirror_path, mirrors_dir, read_cases  # noqa: E402
from bot.taste.scores import LEVELS, cohen_kappa, score  # noqa: E402

DEFAULT_LABELS = ROOT / "tests" / "data" / "importance_labels.jsonl"


_END = re.compile(r"[.!?。！？」)\]`\"'”’]$")


def clipped(text: str) -> bool:
    """Cut mid-sentence: an ellipsis anywhere, or no sentence end at the end."""
    text = text.strip()
    return bool(text) and ("…" in text or text.endswith("...") or not _END.search(text))


def template(risk: str) -> str:
    """A risk line with its specifics blanked out, so repeated templates count as one."""
    text = re.sub(r"\([^)]*\)|（[^）]*）|“[^”]*”|「[^」]*」|`[^`]*`", "()", risk)
    text = re.sub(r"\S*[/\\._]\S*", "X", text)
    text = re.sub(r"[+−-]?\d[\d,.]*", "N", text)
    return text.strip()


def mirrored_sources(labels, mirrors: Path) -> dict[str, str]:
    """repository → its mirror's path, for the labels' repositories that have one (a line for each
    that has none: its commits are skipped)."""
    sources = {}
    for repo in dict.fromkeys(label.repo for label in labels):
        path = mirror_path(mirrors, repo)
        if path is None:
            print(f"mirror of {repo} not found under {mirrors}: its commits are skipped")
        else:
            sources[repo] = str(path)
    return sources


async def analyse_all(labels, mirrors: Path, lang_list=("en", "zh"), learned: bool = False):
    """The labelled commits whose repository has a mirror, read as `python -m bot eval` reads them,
    through the offline analyser in each language; a repository without a mirror is skipped with a line."""
    cases = await read_cases(labels, mirrored_sources(labels, mirrors), None, learn=learned)
    results = []
    for case in cases:
        analyses = {
            lang: analyse_offline(case.commit, case.files, lang, profile=case.profile, judgement=case.judgement)
            for lang in lang_list
        }
        # The rules alone, beside the learned profile's word: the first line of the report compares them.
        analyses["rules"] = (
            analyse_offline(case.commit, case.files, "en", profile=case.profile)
            if case.judgement is not None
            else analyses[lang_list[0]]
        )
        results.append((case.label, case.commit, analyses))
    return results


def headline(name: str, pairs: list[tuple[str, str]]) -> str:
    """κ3 · exact · above-low recall · missed highs, on one line."""
    scores = score(pairs)
    above = [got for want, got in pairs if want != "low"]
    hit = sum(got != "low" for got in above)
    recall = f"{hit}/{len(above)} ({hit / len(above):.0%})" if above else "n/a"
    missed = sum(want == "high" and got != "high" for want, got in pairs)
    return (
        f"{name}: κ3 {cohen_kappa(pairs):.2f} · exact {scores.exact}/{len(pairs)} · "
        f"above-low recall {recall} · missed highs {missed}"
    )


def report(results, show: bool, learned: bool = False) -> None:
    pairs = [(label.level, a["en"].importance.value) for label, _, a in results]
    n = len(pairs)
    print(f"commits evaluated: {n}")
    if not n:
        return
    print(headline("rules only", [(label.level, a["rules"].importance.value) for label, _, a in results]))
    if learned:
        print(headline("as digests judge (rules + learned profile)", pairs))
    scores = score(pairs)
    print("\nconfusion matrix (rows: maintainer, columns: offline analyser)")
    print(f"{'':>10}" + "".join(f"{c:>9}" for c in LEVELS))
    for r in LEVELS:
        print(f"{r:>10}" + "".join(f"{scores.confusion[r][c]:>9}" for c in LEVELS))
    print(f"\nexact agreement: {scores.exact}/{n} ({scores.exact / n:.0%})")
    print(f"Cohen's kappa: {cohen_kappa(pairs):.2f}")
    print(f"low vs above-low agreement: {scores.above_low}/{n} ({scores.above_low / n:.0%})")
    agree, above = scores.either_above_agree, scores.either_above
    print(
        f"agreement where either side rates above low: {agree}/{above} ({agree / above:.0%})"
        if above
        else "agreement where either side rates above low: n/a"
    )
    types = sum(label.type == a["en"].change_type.value for label, _, a in results)
    print(f"change type agreement: {types}/{n} ({types / n:.0%})")

    missed = [
        (label, c, a) for label, c, a in results if label.level == "high" and a["en"].importance is not Importance.HIGH
    ]
    print(f"\nmissed highs: {len(missed)}")
    for label, c, a in missed:
        print(f"  {label.repo} {c.short_sha} {c.title[:70]!r} → {a['en'].importance.value}: {label.reason}")

    clip_list = [
        (lang, c, a[lang].summary) for _, c, a in results for lang in a if lang != "rules" and clipped(a[lang].summary)
    ]
    total = sum(len(a) - 1 for _, _, a in results)
    print(f"clipped summaries: {len(clip_list)}/{total}")
    for lang, c, summary in clip_list[:10]:
        print(f"  [{lang}] {c.short_sha}: {summary[:160]!r}")

    risks = [r for _, _, a in results for r in a["en"].risks]
    templates = Counter(template(r) for r in risks)
    top = templates.most_common(3)
    share = sum(k for _, k in top) / len(risks) if risks else 0.0
    print(f"risk lines: {len(risks)}; top-3 templates: {sum(k for _, k in top)} ({share:.0%})")
    for text, k in top:
        print(f"  {k:>3} × {text[:110]}")
    above_low = [(item, a) for item, _, a in results if a["en"].importance is not Importance.LOW]
    no_risk = sum(1 for _, a in above_low if not a["en"].risks)
    no_impact = sum(1 for _, a in above_low if not a["en"].impact)
    print(f"bot medium/high commits without a risk: {no_risk}/{len(above_low)}; without an impact: {no_impact}")

    if show:
        print("\ndisagreements (maintainer → bot):")
        for label, c, a in results:
            en = a["en"]
            if label.level != en.importance.value:
                print(f"  {c.short_sha} {label.level:>6} → {en.importance.value:<6} {c.title[:60]!r}")
                print(f"      maintainer: {label.reason}")
                print(f"      bot: {en.importance_reason[:200]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mirrors", help=f"directory holding <owner>+<name>/repo git mirrors (default ${MIRRORS_ENV})")
    parser.add_argument("--labels", default=str(DEFAULT_LABELS))
    parser.add_argument("--show", action="store_true", help="list every disagreement")
    parser.add_argument(
        "--learned", action="store_true", help="as digests judge: rules + each repository's learned profile (bot/taste)"
    )
    args = parser.parse_args(argv)
    mirrors = mirrors_dir(args.mirrors)
    if mirrors is None or not mirrors.is_dir():
        where = f"no mirrors at {mirrors}" if mirrors else f"no mirrors given (--mirrors DIR or ${MIRRORS_ENV})"
        print(f"{where}: nothing to evaluate (fetch the labelled repositories first)")
        return 0
    try:
        labels = load_labels(Path(args.labels))
        results = asyncio.run(analyse_all(labels, mirrors, learned=args.learned))
    except BotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report(results, args.show, args.learned)
    return 0


if __name__ == "__main__":
    sys.exit(main())

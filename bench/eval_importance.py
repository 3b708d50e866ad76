"""How far the offline analyser agrees with a maintainer: a labelled set of real commits.

  python bench/eval_importance.py [--mirrors DIR] [--labels FILE] [--show]

`tests/data/importance_labels.jsonl` holds one line per commit — repo, sha, the level and change
type a maintainer gave it from its diff (before the bot's label was looked at), and a one-line
reason. Only these labels live in the repository: the commits themselves are read at run time from
fetched mirrors of the public repositories (`DIR/<owner>+<name>/repo`, default /work/.mirror, or
$DIGEST_EVAL_MIRRORS), through the bot's own local git source, and analysed by the offline
analyser exactly as a digest would. When a mirror is absent, its commits are skipped with a line
saying so (exit 0: CI has no mirrors).

Printed: the confusion matrix (rows: the maintainer, columns: the bot), Cohen's κ, agreement on
the commits either side rates above low, the missed highs, clipped summaries (cut mid-sentence or
ending with "…", in both languages) and the share of the three most common risk templates among
all risk lines.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.analysis.offline import analyse_offline  # noqa: E402
from bot.models import Importance  # noqa: E402
from bot.sources.localgit import LocalGitSource  # noqa: E402

LEVELS = ("high", "medium", "low")
DEFAULT_LABELS = ROOT / "tests" / "data" / "importance_labels.jsonl"
DEFAULT_MIRRORS = os.environ.get("DIGEST_EVAL_MIRRORS", "/work/.mirror")


def mirror_path(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    return None


def cohen_kappa(pairs: list[tuple[str, str]]) -> float:
    n = len(pairs)
    if not n:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / n
    rows = Counter(a for a, _ in pairs)
    cols = Counter(b for _, b in pairs)
    expected = sum(rows[k] * cols[k] for k in LEVELS) / (n * n)
    return (observed - expected) / (1 - expected) if expected < 1 else 1.0


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


async def analyse_all(labels: list[dict], mirrors: Path, lang_list=("en", "zh")):
    sources: dict[str, LocalGitSource | None] = {}
    results = []
    for item in labels:
        repo = item["repo"]
        if repo not in sources:
            path = mirror_path(mirrors, repo)
            sources[repo] = LocalGitSource(str(path)) if path else None
            if path is None:
                print(f"mirror of {repo} not found under {mirrors}: its commits are skipped")
        source = sources[repo]
        if source is None:
            continue
        commit = await source.get_commit(item["sha"])
        files = await source.get_files(commit.sha)
        analyses = {lang: analyse_offline(commit, files, lang) for lang in lang_list}
        results.append((item, commit, analyses))
    return results


def report(results, show: bool) -> None:
    pairs = [(item["level"], a["en"].importance.value) for item, _, a in results]
    n = len(pairs)
    print(f"commits evaluated: {n}")
    if not n:
        return
    print("\nconfusion matrix (rows: maintainer, columns: offline analyser)")
    print(f"{'':>10}" + "".join(f"{c:>9}" for c in LEVELS))
    for r in LEVELS:
        print(f"{r:>10}" + "".join(f"{sum(1 for a, b in pairs if a == r and b == c):>9}" for c in LEVELS))
    exact = sum(a == b for a, b in pairs)
    print(f"\nexact agreement: {exact}/{n} ({exact / n:.0%})")
    print(f"Cohen's kappa: {cohen_kappa(pairs):.2f}")
    above = [(a, b) for a, b in pairs if a != "low" or b != "low"]
    agree = sum(a == b for a, b in above)
    print(f"agreement where either side rates above low: {agree}/{len(above)}"
          f" ({agree / len(above):.0%})" if above else "agreement where either side rates above low: n/a")
    types = sum(item["type"] == a["en"].change_type.value for item, _, a in results)
    print(f"change type agreement: {types}/{n} ({types / n:.0%})")

    missed = [(item, c, a) for item, c, a in results
              if item["level"] == "high" and a["en"].importance is not Importance.HIGH]
    print(f"\nmissed highs: {len(missed)}")
    for item, c, a in missed:
        print(f"  {item['repo']} {c.short_sha} {c.title[:70]!r} → {a['en'].importance.value}: {item['reason']}")

    clip_list = [(lang, c, a[lang].summary) for _, c, a in results for lang in a if clipped(a[lang].summary)]
    total = sum(len(a) for _, _, a in results)
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
        for item, c, a in results:
            en = a["en"]
            if item["level"] != en.importance.value:
                print(f"  {c.short_sha} {item['level']:>6} → {en.importance.value:<6} {c.title[:60]!r}")
                print(f"      maintainer: {item['reason']}")
                print(f"      bot: {en.importance_reason[:200]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mirrors", default=DEFAULT_MIRRORS,
                        help="directory holding <owner>+<name>/repo git mirrors (default %(default)s)")
    parser.add_argument("--labels", default=str(DEFAULT_LABELS))
    parser.add_argument("--show", action="store_true", help="list every disagreement")
    args = parser.parse_args(argv)
    mirrors = Path(args.mirrors)
    if not mirrors.is_dir():
        print(f"no mirrors at {mirrors}: nothing to evaluate (fetch the labelled repositories first)")
        return 0
    labels = [json.loads(line) for line in Path(args.labels).read_text().splitlines() if line.strip()]
    results = asyncio.run(analyse_all(labels, mirrors))
    report(results, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())

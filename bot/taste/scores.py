"""Agreement between two raters of importance (a maintainer's labels and an analyser's levels).

Pure functions over (label, predicted) pairs of "high" / "medium" / "low"; used by the model
report card (`python -m bot eval`) and `bench/eval_importance.py`, so both print the same figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

LEVELS = ("high", "medium", "low")
_RANK = {level: rank for rank, level in enumerate(reversed(LEVELS))}  # low 0, medium 1, high 2

Pair = tuple[str, str]  # (label, predicted)


def cohen_kappa(pairs: list[Pair]) -> float:
    """Cohen's κ on the three levels: agreement beyond what the two raters' own level shares
    would give by chance. NaN for no pairs; 1.0 when chance alone would agree on everything."""
    n = len(pairs)
    if not n:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / n
    rows = Counter(a for a, _ in pairs)
    cols = Counter(b for _, b in pairs)
    expected = sum(rows[k] * cols[k] for k in LEVELS) / (n * n)
    return (observed - expected) / (1 - expected) if expected < 1 else 1.0


def confusion(pairs: Iterable[Pair]) -> dict[str, dict[str, int]]:
    """label → predicted → count, every level present (rows: the labels)."""
    counts = Counter(pairs)
    return {label: {pred: counts[(label, pred)] for pred in LEVELS} for label in LEVELS}


@dataclass(frozen=True)
class Scores:
    n: int
    exact: int  # same level
    kappa: float  # NaN when n == 0
    above_low: int  # same side of the low / above-low line (medium and high together)
    either_above: int  # commits that either rater put above low …
    either_above_agree: int  # … and of those, the ones rated the same level
    higher: int  # predicted above the label
    lower: int  # predicted below the label
    confusion: dict[str, dict[str, int]]

    def as_dict(self) -> dict:
        kappa = None if self.kappa != self.kappa else round(self.kappa, 4)  # NaN is not JSON
        return {
            "commits": self.n,
            "exact": self.exact,
            "kappa": kappa,
            "above_low_agreement": self.above_low,
            "either_above_low": self.either_above,
            "either_above_low_agreement": self.either_above_agree,
            "rated_higher": self.higher,
            "rated_lower": self.lower,
            "confusion": self.confusion,
        }


def score(pairs: list[Pair]) -> Scores:
    either = [(a, b) for a, b in pairs if a != "low" or b != "low"]
    return Scores(
        n=len(pairs),
        exact=sum(a == b for a, b in pairs),
        kappa=cohen_kappa(pairs),
        above_low=sum((a != "low") == (b != "low") for a, b in pairs),
        either_above=len(either),
        either_above_agree=sum(a == b for a, b in either),
        higher=sum(_RANK[b] > _RANK[a] for a, b in pairs),
        lower=sum(_RANK[b] < _RANK[a] for a, b in pairs),
        confusion=confusion(pairs),
    )

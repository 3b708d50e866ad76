"""For an offline answer about a commit: the hunks most relevant to the question asked, best
first, within a token budget (`relevant_hunks`).

A question is read as search terms (identifiers, their sub-words, CJK bigrams, file names) and
each hunk scored by them. Its own module since it ranks hunks where `select_diff` ranks files;
it fills the budget with the same packer, skip rules, redaction and closing list (packing.py).
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.models import FileChange
from .hunks import Hunk
from .packing import DiffSelection, Packer, PreparedFile, assemble, prepare, tail_reserve
from .tokens import CJK_RUN

_STOPWORDS = frozenset(
    """
a an the and or but if then else of to in on at by for from with without into onto about as is are
was were be been being do does did done doing have has had having it its this that these those what
which who whom whose why how when where there here can could should would will shall may might must
not no yes i you he she we they me my your our their them us please explain tell show describe
change changes changed commit commits diff file files code line lines function method class mean
meaning whats happen happened happens new old add added adds remove removed removes fix fixed fixes
update updated updates use used uses using make made makes get gets got also just more most less
only all any some each other than too very so such same own both few via per work works
""".split()
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILE_NAME = re.compile(r"[\w.\-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b|[\w\-]+/[\w./\-]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class _Terms:
    """A question's search terms, lowercased."""

    identifiers: frozenset[str]  # words and identifiers as written: parse_date, timezone
    parts: frozenset[str]  # their sub-words (parse, date) and CJK bigrams
    names: frozenset[str]  # file names and paths: utils.py, src/app

    @property
    def all(self) -> frozenset[str]:
        return self.identifiers | self.parts


def _subwords(identifier: str) -> list[str]:
    return [p.lower() for chunk in identifier.split("_") for p in _CAMEL_PART.findall(chunk) if len(p) >= 3]


def _question_terms(question: str) -> _Terms:
    words = _WORD.findall(question)
    identifiers = {w.lower() for w in words if len(w) >= 3 and w.lower() not in _STOPWORDS}
    parts = {p for w in words for p in _subwords(w) if p not in _STOPWORDS}
    for run in CJK_RUN.findall(question):
        parts |= {run[i : i + 2] for i in range(max(1, len(run) - 1))}
    names = {n.lower().strip("./") for n in _FILE_NAME.findall(question)}
    return _Terms(frozenset(identifiers), frozenset(parts - identifiers), frozenset(n for n in names if n))


@dataclass
class _HunkCandidate:
    item: PreparedFile
    position: int  # the hunk's index within its file
    hunk: Hunk
    score: float = 0.0


def _score_hunks(candidates: Sequence[_HunkCandidate], terms: _Terms) -> None:
    """Score = Σ over the question's terms found in the hunk of weight × rarity × (1 + log hits),
    where identifiers weigh 3 and sub-words 1, rarer terms (in fewer hunks) weigh more, and hits
    on changed lines count double; plus a bonus when the hunk's file is the one named."""
    texts = [(c.hunk.text() + "\n" + c.item.path).lower() for c in candidates]
    frequency = {term: sum(1 for text in texts if term in text) for term in terms.all}
    for candidate in candidates:
        changed = "\n".join(ln for ln in candidate.hunk.lines if ln[:1] in ("+", "-")).lower()
        context = "\n".join(
            [candidate.hunk.header, *(ln for ln in candidate.hunk.lines if ln[:1] not in ("+", "-"))]
        ).lower()
        score = 0.0
        for term in terms.all:
            hits = 2 * changed.count(term) + context.count(term)
            if hits:
                weight = 3.0 if term in terms.identifiers else 1.0
                rarity = math.log(1 + len(candidates) / (1 + frequency[term]))
                score += weight * rarity * (1 + math.log(hits))
        candidate.score = score + _path_score(candidate.item.path, terms)


def _path_score(path: str, terms: _Terms) -> float:
    lower = path.lower()
    base = posixpath.basename(lower)
    if any(lower == name or lower.endswith("/" + name) or base == name for name in terms.names):
        return 6.0
    return 3.0 if base.rsplit(".", 1)[0] in terms.all else 0.0


def relevant_hunks(files: Sequence[FileChange], question: str, budget_tokens: int) -> DiffSelection:
    """For offline Q&A: the hunks most relevant to `question`, best first, each under its file path
    and @@ header, within `budget_tokens`; files named only (deleted without a patch, bare renames)
    come last. Same skip rules, redaction and closing list as select_diff."""
    budget = max(0, int(budget_tokens))
    prepared, kinds = prepare(files, deleted_by_name=False)
    terms = _question_terms(question)
    candidates = [
        _HunkCandidate(item, i, hunk) for item in prepared if item.reason is None for i, hunk in enumerate(item.hunks)
    ]
    _score_hunks(candidates, terms)
    candidates.sort(key=lambda c: (-c.score, c.item.rank, c.item.index, c.position))
    named = sorted(
        (item for item in prepared if item.reason is None and item.name_only is not None),
        key=lambda item: (-_path_score(item.path, terms), item.index),
    )
    skipped = [(item.path, item.reason) for item in prepared if item.reason]

    packer = Packer(budget - tail_reserve(budget, skipped))
    for c in candidates:
        head = f"### {c.item.path}\n{c.hunk.header}"
        if not packer.add_text(c.item.index, "\n".join([head, *c.hunk.lines]), hunks=1):
            packer.add_clipped(c.item.index, head, c.hunk.lines, hunks=1)
    for item in named:
        packer.add_text(item.index, item.name_only or "")
    hunk_totals = {item.index: len(item.hunks) for item in prepared if item.hunks}
    return assemble(packer.parts, prepared, budget, kinds, hunk_totals)

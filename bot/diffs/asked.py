"""What a question about a commit asks for, as terms to find in its diff, and how a diff's lines
are scored by them — for both selections by question (relevant.py): the hunks an LLM prompt
holds when the whole diff does not fit, and the blocks an offline answer shows.

A question's terms are its words and identifiers (whole and in parts), the numbers it names
(`429`), its file names, and, for Chinese, the English words of the glossary's terms it uses
(bot/core/glossary.py, shared with the history search: 重试 → retry, 飞书 → feishu) plus the
two-character pairs of the Chinese left over (for Chinese text in the diff itself). A term meets
the diff through the diff's identifiers: each is split into its parts (`RetryAfterHandler` →
retry after handler, `max_retries` → max retries) and every word is compared by a light stem
(retries, retried, retrying → retry), so `retry` finds `_can_retry_async` and `max_retries`
without finding `log` in `catalog`. Words that say what kind of question it is (break, risk, 风险,
问题) are not terms: they are in every question about a change and name nothing in it.
"""

from __future__ import annotations

import functools
import math
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.glossary import translate
from .hunks import IMPORT_LINE
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
break breaks broke broken breaking risk risks risky problem problems issue issues wrong go goes
impact impacts affect affects cause causes caused concern concerns danger dangerous safe regress
regression
""".split()
)
# Chinese for what kind of question it is, taken out after the glossary has read its terms.
_INTENT_ZH = ("会出", "出什么", "问题", "风险", "影响", "可能", "导致", "会不会", "哪里", "这个", "那个", "代码")
_CHINESE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")  # letters only: not the full-width ？，
_SHA = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,40}\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|(?<![A-Za-z0-9_])[0-9]{3,}(?![A-Za-z0-9_])")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_FILE_NAME = re.compile(r"[\w.\-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b|[\w\-]+/[\w./\-]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class Terms:
    """A question's search terms, lowercased (`identifiers` and `parts` as stems)."""

    identifiers: frozenset[str]  # words and identifiers as asked (and the glossary's words): weight 3
    parts: frozenset[str]  # their sub-words: weight 1
    pairs: frozenset[str]  # two-character pairs of the Chinese left over (found as substrings)
    names: frozenset[str]  # file names and paths: utils.py, src/app

    @property
    def all(self) -> frozenset[str]:
        return self.identifiers | self.parts | self.pairs


def stem(word: str) -> str:
    """A light stem, the same on both sides: retries, retried, retrying → retry; caches, cached,
    caching → cach; classes → class."""
    w = word.lower()
    for suffix, instead in (("ies", "y"), ("ied", "y"), ("ying", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not (suffix == "s" and w.endswith("ss")):
            w = w[: len(w) - len(suffix)] + instead
            break
    return w[:-1] if w.endswith("e") and len(w) > 4 else w


def subwords(identifier: str) -> list[str]:
    """`RetryAfterHandler` → retry after handler; `max_retries` → max retries (parts of 3+ letters)."""
    return [p.lower() for chunk in identifier.split("_") for p in _CAMEL_PART.findall(chunk) if len(p) >= 3]


def question_terms(question: str) -> Terms:
    text = _SHA.sub(" ", question or "")  # the commit it names is not a word to look for
    words = _WORD.findall(CJK_RUN.sub(" ", text))
    chinese = " ".join(_CHINESE.findall(text))
    english, _, rest = translate(chinese)
    for intent in _INTENT_ZH:
        rest = rest.replace(intent, " ")
    asked = [w for w in words + english if w.lower() not in _STOPWORDS and (len(w) >= 3 or w.isdigit())]
    identifiers = {stem(w) for w in asked}
    parts = {stem(p) for w in words for p in subwords(w) if p not in _STOPWORDS}
    pairs = {run[i : i + 2] for run in _CHINESE.findall(rest) for i in range(max(1, len(run) - 1))}
    names = {n.lower().strip("./") for n in _FILE_NAME.findall(text)}
    return Terms(
        frozenset(identifiers), frozenset(parts - identifiers), frozenset(pairs), frozenset(n for n in names if n)
    )


def line_keys(line: str) -> list[str]:
    """The stems a line offers to a question's terms: each identifier whole and each of its parts
    (one entry per occurrence, so hits can be counted)."""
    keys: list[str] = []
    for token in _TOKEN.findall(line):
        keys.extend(_token_keys(token))
    return keys


@functools.lru_cache(maxsize=65536)
def _token_keys(token: str) -> tuple[str, ...]:
    """An identifier's stems, whole and in parts (a diff repeats its identifiers: stemmed once)."""
    whole = stem(token)
    parts = subwords(token)
    if len(parts) > 1 or (parts and stem(parts[0]) != whole):
        return (whole, *(stem(p) for p in parts))
    return (whole,)


@dataclass
class Unit:
    """A piece of a diff scored as a whole: a hunk (the LLM prompt's selection) or a block of one
    (the offline answer's)."""

    path: str
    rank: int  # packing._RANK of its file: source 0 … tests 3, docs 4
    header: str
    lines: Sequence[str]
    score: float = 0.0


# Code before tests: a test's, a benchmark's or a doc's match weighs less than the code's, so
# the code that does the thing comes first and its tests after (a question that names a test
# file still gets it first: the name's bonus is not reduced; one that asks about tests weighs
# them as code).
KIND_FACTOR = {0: 1.0, 1: 1.0, 2: 0.6, 3: 0.5, 4: 0.5}
TEST_RANK = 3


def score_units(units: Sequence[Unit], terms: Terms) -> None:
    """Score = Σ over the question's terms found in the unit of weight × rarity × (1 + log hits),
    where identifiers weigh 3 and sub-words and Chinese pairs 1; rarity is BM25's
    log(1 + (units − holding + ½) / (holding + ½)), so a word in most units (the commit's own
    subject: `slack` in a Slack adapter) weighs little; a hit on a changed line of code counts
    double (on an import, a comment or a docstring, as context); all times KIND_FACTOR of the
    unit's file; plus a bonus when the unit's file is the one named."""
    wanted = terms.identifiers | terms.parts
    # A token that stems to a term holds the term's first four letters (a stem only changes the
    # end of a word), so a line without any of them is not tokenised at all.
    prefixes = {t[:4] for t in wanted}
    counted: list[tuple[dict[str, int], dict[str, int]]] = []
    frequency: dict[str, int] = dict.fromkeys(terms.all, 0)
    for unit in units:
        changed: dict[str, int] = {}
        context: dict[str, int] = {}
        prose: set[int] | None = None  # worked out at the first line that holds a term
        for position, line in enumerate([unit.header, *unit.lines]):
            low = line.lower()
            found: dict[str, int] = {}
            if any(prefix in low for prefix in prefixes):
                for key in line_keys(line):
                    if key in wanted:
                        found[key] = found.get(key, 0) + 1
            for pair in terms.pairs:
                if (n := line.count(pair)) > 0:
                    found[pair] = found.get(pair, 0) + n
            if not found:
                continue
            if prose is None:
                prose = _prose_lines(unit.lines)
            is_changed = position > 0 and line[:1] in ("+", "-") and (position - 1) not in prose
            into = changed if is_changed else context
            for key, n in found.items():
                into[key] = into.get(key, 0) + n
        for term in set(changed) | set(context):
            frequency[term] += 1
        counted.append((changed, context))
    total = len(units)
    for unit, (changed, context) in zip(units, counted, strict=True):
        score = 0.0
        for term in set(changed) | set(context):
            n = 2 * changed.get(term, 0) + context.get(term, 0)
            weight = 3.0 if term in terms.identifiers else 1.0
            rarity = math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
            score += weight * rarity * (1 + math.log(n))
        factor = 1.0 if "test" in wanted and unit.rank == TEST_RANK else KIND_FACTOR.get(unit.rank, 1.0)
        unit.score = score * factor + path_score(unit.path, terms)


_QUOTES = re.compile(r'"""|\'\'\'')


def _prose_lines(lines: Sequence[str]) -> set[int]:
    """The lines (indexes) that are prose or bring names in — comments, docstrings, imports — as
    far as a block shows them (a docstring opened before the block is not known to be one)."""
    prose: set[int] = set()
    inside = False
    for i, line in enumerate(lines):
        code = line[1:]
        quotes = len(_QUOTES.findall(code))
        if inside or quotes or code.lstrip().startswith(("#", "//", "/*", "* ")) or IMPORT_LINE.match(code):
            prose.add(i)
        if quotes % 2:
            inside = not inside
    return prose


def path_score(path: str, terms: Terms) -> float:
    lower = path.lower()
    base = posixpath.basename(lower)
    if any(lower == name or lower.endswith("/" + name) or base == name for name in terms.names):
        return 6.0
    return 3.0 if stem(base.rsplit(".", 1)[0]) in terms.identifiers | terms.parts else 0.0

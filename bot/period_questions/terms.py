"""Words for the full-text index and for the query, the same way on both sides.

The index's tokenizer (SQLite FTS5 `porter unicode61`) splits on anything that is not a letter or
a digit, so `vllm/core/scheduler.py` and `parse_requirements` already give their parts; what it
cannot do is split camelCase (`FlashAttentionBackend`) or segment Chinese (a run of Chinese is
one token to it). So the text is prepared here: identifiers get their camelCase parts added, and
every Chinese run becomes its overlapping two-character pairs in a column of its own. A question
gets the same treatment, minus its question words, plus the English words of the Chinese
technical terms it uses (the glossary, bot/core/glossary.py, shared with the commit answers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.glossary import translate

_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_IDENT = re.compile(r"[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_WORD = re.compile(r"[A-Za-z0-9]+")

# Definitions on changed lines and in hunk headers: the symbols a commit touches.
_DEFINITION = re.compile(
    r"\b(?:def|class|fn|struct|enum|trait|impl|function|func|interface|type|mod|macro_rules!|const|static)\s+"
    r"(?:<[^>]*>\s*)?([A-Za-z_][A-Za-z0-9_]*)"
)
_HUNK = re.compile(r"^@@[^@]*@@\s*(.*)$")
MAX_SYMBOLS = 200

# Path parts every repository has: they say nothing about where a commit works.
GENERIC_PARTS = frozenset("src lib mod main index init crates packages pkg internal rs py".split())

# Words that say what kind of question it is, not what it is about.
STOP_EN = frozenset(
    """
a an the and or but of to in on at by for with from into onto over about as is are was were be been being do
does did done have has had having what which who whom whose when where why how that this these those there
here it its they them their we our us you your i me my any some all anything something everything much many
more most other such than then so very can could would should will shall may might must need needs not no
happen happened happening changed change changes changing update updated updates modify modified new
commit commits pr prs repo repository code land landed merged merge go went get got make made also just
tell show list give summarize summarise summary explain anyone please recently recent lately week weeks
day days month months since today yesterday last past previous this
""".split()
)


@dataclass(frozen=True)
class Query:
    words: tuple[str, ...]  # lower-case English words and identifier parts
    phrases: tuple[tuple[str, ...], ...]  # multi-part identifiers asked for as they are written
    pairs: tuple[str, ...]  # Chinese two-character pairs

    @property
    def empty(self) -> bool:
        return not (self.words or self.phrases or self.pairs)

    def fts(self) -> str:
        """The FTS5 MATCH expression: any of the terms (BM25 ranks by how many and how rare)."""
        terms = [_quote(" ".join(p)) for p in self.phrases]
        terms += [_quote(w) for w in self.words]
        terms += [f"cjk : {_quote(p)}" for p in self.pairs]
        return " OR ".join(dict.fromkeys(terms))


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def camel_parts(word: str) -> list[str]:
    """`FlashAttentionBackend` → flash attention backend; `HTTPServer` → http server. Words that
    only look camel-cased stay whole: `ROCm`, `MoE`, `vLLM`, `FP8`, `e4m3` (a part of one or two
    letters is an acronym's tail, not a word)."""
    parts = _CAMEL.findall(word)
    if len(parts) < 2 or any(len(re.sub(r"\d", "", p)) < 3 for p in parts):
        return [word.lower()]
    return [p.lower() for p in parts]


def expand(text: str) -> str:
    """Text for the index: as written, plus the camelCase parts of its identifiers."""
    extra: list[str] = []
    for ident in _IDENT.findall(text or ""):
        for word in _WORD.findall(ident):
            parts = camel_parts(word)
            if len(parts) > 1:
                extra.extend(parts)
    return (text or "") + ("\n" + " ".join(extra) if extra else "")


def path_parts(paths: Iterable[str]) -> str:
    """The words of the touched paths' directories, crates, packages and file stems, each once:
    `crates/uv-resolver/src/lib.rs` → uv resolver. A word there says where a commit works, which
    a word in its message does not ("resolving" in a trampoline upgrade); once each, so a commit
    touching fifty files of one crate is not taken for fifty mentions of it."""
    found: dict[str, None] = {}
    for path in paths:
        *dirs, name = (path or "").split("/")
        stem = name.split(".", 1)[0] if not name.startswith(".") else name
        for part in (*dirs, stem):
            for word in _WORD.findall(part):
                for w in camel_parts(word):
                    if w not in GENERIC_PARTS and len(w) > 1:
                        found.setdefault(w, None)
    return " ".join(found)


def cjk_pairs(text: str) -> list[str]:
    """Every overlapping two-character pair of every Chinese run (a single character is skipped)."""
    pairs: list[str] = []
    for run in _CJK_RUN.findall(text or ""):
        pairs.extend(run[i : i + 2] for i in range(len(run) - 1))
    return pairs


def symbols(patches: list[str | None]) -> list[str]:
    """Names defined or touched by the changed lines and hunk headers (at most MAX_SYMBOLS)."""
    found: dict[str, None] = {}
    for patch in patches:
        for line in (patch or "").splitlines():
            if line.startswith(("+++", "---")):
                continue
            if line.startswith("@@"):
                header = _HUNK.match(line)
                line = header.group(1) if header else ""
            elif not line.startswith(("+", "-")):
                continue
            for name in _DEFINITION.findall(line):
                found.setdefault(name, None)
            if len(found) >= MAX_SYMBOLS:
                return list(found)
    return list(found)


def build_query(question: str) -> Query:
    """The question's search terms: identifiers (whole and in parts), English words minus the
    question words, glossary words for Chinese terms, and pairs of the Chinese left over."""
    words: dict[str, None] = {}
    phrases: dict[tuple[str, ...], None] = {}
    latin = _CJK_RUN.sub(" ", question or "")
    for ident in _IDENT.findall(latin):
        parts = [p for word in _WORD.findall(ident) for p in (camel_parts(word) or [word.lower()])]
        whole = [w.lower() for w in _WORD.findall(ident)]
        if len(parts) > 1 and not all(p in STOP_EN for p in parts):
            phrases.setdefault(tuple(parts), None)
        for w in dict.fromkeys(whole + parts):
            if w not in STOP_EN and (len(w) > 1 or w.isdigit()):
                words.setdefault(w, None)
    english, found, chinese = translate(" ".join(_CJK_RUN.findall(question or "")))
    for w in english:
        words.setdefault(w, None)
    pairs = tuple(dict.fromkeys(cjk_pairs(" ".join(found)) + cjk_pairs(chinese)))
    return Query(tuple(words), tuple(phrases), pairs)

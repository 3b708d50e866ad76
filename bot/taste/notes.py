"""Release notes → which pull request the maintainers listed, and under which heading.

Read: Markdown and reStructuredText changelogs (`CHANGELOG.md`, `CHANGES.md`, `HISTORY.md`,
`NEWS.rst`, `changelogs/*.md`, `docs/changelog*` …), towncrier-style fragments
(`changelog.d/123.bugfix.md`, `newsfragments/`, `changes/`, `news/`), GitHub Releases bodies (the
same Markdown) and PR labels. Each heading or fragment type is sorted into a `Category`, whose level
is what the maintainers' choice says about importance: breaking changes and security are high,
documentation and internal work low, every other user-facing heading medium. The heading's own
words are kept: the reader is told "listed under Bug fixes", in the maintainers' terms.

Pure code: texts in, entries out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from ..core.models import Importance


class Category(str, Enum):
    BREAKING = "breaking"
    SECURITY = "security"
    DEPRECATION = "deprecation"
    FEATURE = "feature"
    FIX = "fix"
    PERFORMANCE = "performance"
    OTHER = "other"  # listed under a user-facing heading we cannot name more precisely
    DOCS = "docs"
    INTERNAL = "internal"

    @property
    def level(self) -> Importance:
        if self in (Category.BREAKING, Category.SECURITY):
            return Importance.HIGH
        if self in (Category.DOCS, Category.INTERNAL):
            return Importance.LOW
        return Importance.MEDIUM


# Heading words → category; the first that matches decides, so the order matters ("Deprecations
# and Removals" breaks callers; "Bug fixes in the docs" is documentation).
_HEADING_RULES: tuple[tuple[Category, re.Pattern[str]], ...] = tuple(
    (cat, re.compile(pattern, re.I))
    for cat, pattern in (
        (Category.BREAKING, r"breaking|backwards?[- ]incompat|\bincompatib|\bremov(al|als|ed)\b"),
        (Category.SECURITY, r"secur|vulnerab|\bcve\b"),
        (Category.DEPRECATION, r"deprecat"),
        (Category.DOCS, r"\bdoc(s|umentation)?\b"),
        (
            Category.INTERNAL,
            r"internal|contrib|trivial|process|chore|maintenance|\bci\b|development|testing|\btests?\b"
            r"|infrastructure|refactor|dependabot|\bskip\b|ignore",
        ),
        (Category.PERFORMANCE, r"perf|speed|faster|optimi"),
        (Category.FIX, r"\bfix|bug|crash"),
        (Category.FEATURE, r"feature|enhanc|\badd(ed|itions?)?\b|\bnew\b|improve|preview|stabili[sz]"),
        # "Miscellaneous fixes" are fixes; a heading that is only "Misc" is not for users.
        (Category.INTERNAL, r"\bmisc"),
    )
)

# towncrier's and its cousins' fragment types (the middle of `123.bugfix.md`); an unknown word
# there is not a fragment (`0.1.x.md` is a compiled changelog).
FRAGMENT_TYPES = frozenset(
    "breaking removal removed deprecation deprecated feature features improvement improvements enhancement "
    "bugfix bugfixes bug fix fixed added changed change security vendor doc docs documentation packaging "
    "contrib misc trivial process perf performance internal".split()
)
_FRAGMENT = re.compile(
    r"^(?:.*/)?(?:changelog\.d|changelog|newsfragments|news|changes|\.changes|changes\.d)/"
    r"\+?([\w-]+?)\.(\w+)(?:\.\d+)?(?:\.(?:md|rst|txt|markdown))?$",
    re.I,
)
# A changelog file, compiled: at the root or under docs/, or one file per series (ruff's changelogs/).
_NOTES_FILE = re.compile(
    r"^(?:docs?/(?:[\w-]+/)*)?(?:changelog|changes|history|news|release[-_]?notes)(?:\.(?:md|rst|txt|markdown))?$"
    r"|^changelogs/[^/]+\.(?:md|rst)$",
    re.I,
)
_VERSION = re.compile(r"^\W*(?:v(?:ersion)?\s*)?\[?v?\d+(?:\.\d+)+|^\W*(?:release|version)\s+v?\d", re.I)
_UNRELEASED = re.compile(r"unreleased|next release|upcoming|in development|not yet released|^\W*main\W*$", re.I)
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^*+#`'\"])\1{2,}\s*$")
# PR references: links to /pull/N, "(#N)", "[#N]", "PR N"; never /issues/N.
_PR_REF = re.compile(r"/pulls?/(\d+)|(?<![\w/])#(\d+)\b|\bPR\s*\[?#?(\d+)", re.I)
# GitHub's generated notes: "* Title by @someone in https://github.com/o/r/pull/123".
_GENERATED = re.compile(r"\bby @[\w-]+(?:\[bot\])? in\b")


def category_of(words: str) -> Category:
    """What a heading (or a fragment type, or a PR label) says about importance."""
    for cat, pattern in _HEADING_RULES:
        if pattern.search(words):
            return cat
    return Category.OTHER


@dataclass(frozen=True)
class Entry:
    number: int  # the pull request
    category: Category
    heading: str  # the maintainers' words: "Bug fixes"
    released: bool  # under a version's heading (False: "Unreleased" / "Next release")


@dataclass
class ReleaseNotes:
    """Every PR the notes list (the first listing wins: newest versions come first)."""

    entries: dict[int, Entry]
    generated_lines: int = 0  # lines in GitHub's generated "… by @x in …/pull/N" shape
    lines: int = 0  # entry lines with a PR reference

    @property
    def looks_generated(self) -> bool:
        """Mostly GitHub's automatic 'What's Changed' lines (they list every PR)."""
        return self.lines >= 10 and self.generated_lines >= 0.8 * self.lines

    def merge(self, other: ReleaseNotes) -> None:
        for number, entry in other.entries.items():
            self.entries.setdefault(number, entry)
        self.generated_lines += other.generated_lines
        self.lines += other.lines


def is_notes_file(path: str) -> bool:
    return bool(_NOTES_FILE.match(path))


def fragment_category(path: str) -> Category | None:
    """`changelog.d/123.bugfix.md` → FIX; None when the path is not a fragment."""
    match = _FRAGMENT.match(path)
    if not match or match.group(2).lower() not in FRAGMENT_TYPES:
        return None
    return category_of(match.group(2))


def fragment_heading(path: str) -> str:
    match = _FRAGMENT.match(path)
    return match.group(2).lower() if match else ""


def parse_notes(text: str) -> ReleaseNotes:
    """Entries of one changelog (Markdown or reStructuredText, or a release's body)."""
    notes = ReleaseNotes({})
    heading, version_unreleased, in_version = "", False, False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        title = _heading(lines, i)
        if title is not None:
            if _UNRELEASED.search(title) and len(title) < 60:
                version_unreleased, in_version, heading = True, True, ""
            elif _VERSION.match(title):
                version_unreleased, in_version, heading = False, True, ""
            else:
                heading = _clean(title)
            continue
        if not line.strip() or _RST_UNDERLINE.match(line):
            continue
        numbers = [int(next(g for g in m.groups() if g)) for m in _PR_REF.finditer(line)]
        if not numbers:
            continue
        notes.lines += 1
        if _GENERATED.search(line):
            notes.generated_lines += 1
        cat = category_of(heading) if heading else Category.OTHER
        entry = Entry(0, cat, heading, released=in_version and not version_unreleased)
        for number in numbers:
            if number not in notes.entries:
                notes.entries[number] = Entry(number, entry.category, entry.heading, entry.released)
    return notes


def parse_all(texts: Iterable[str]) -> ReleaseNotes:
    notes = ReleaseNotes({})
    for text in texts:
        notes.merge(parse_notes(text))
    return notes


def label_category(labels: Iterable[str]) -> Category | None:
    """What a PR's labels say (`bug`, `enhancement`, `breaking`, `internal`, `ci`, `dependencies`),
    the most serious first; None when no label speaks of importance."""
    found = [category_of(label.replace("-", " ").replace("_", " ")) for label in labels]
    found += [Category.INTERNAL for label in labels if re.search(r"depend|\bci\b|github.actions", label, re.I)]
    ranked = [c for c in found if c is not Category.OTHER]
    if not ranked:
        return None
    return min(ranked, key=lambda c: (c.level.rank, _ORDER.index(c)))


_ORDER = list(Category)


def _heading(lines: list[str], i: int) -> str | None:
    """The heading's text when line i is one: `## Bug fixes`, or a reStructuredText title
    (a line underlined, optionally overlined, by a run of one punctuation character)."""
    line = lines[i]
    match = _MD_HEADING.match(line)
    if match:
        return match.group(2)
    if i + 1 < len(lines) and line.strip() and not line.startswith((" ", "-", "*", "`")):
        under = lines[i + 1]
        if _RST_UNDERLINE.match(under) and len(under.rstrip()) >= len(line.rstrip()) - 1:
            return line.strip()
    return None


def _clean(title: str) -> str:
    """A heading as the reader is told it: markup and emoji gone."""
    title = re.sub(r"[*_`\[\]]|<[^>]+>|:\w+:", "", title)
    title = re.sub(r"[^\w\s&/,.'()-]", "", title)
    return re.sub(r"\s+", " ", title).strip()

"""Size and kind: how much source code changes, measured on source only (tests, docs, lockfiles,
generated and internal files never make a commit look important); a fix, feature or performance
change to the code that ships, as a careful reader of the diff would call it; and the generic
risks that speak only when no specific rule does.

Both are guesses from the diff's shape, not specific facts (`Fact.size`): a specific fact is named
before them, and a repository's learned profile lowers them where its release notes rarely list
such changes (offline/learned.py)."""

from __future__ import annotations

import re

from ....core.models import ChangeType, Importance
from ....i18n import Count, phrase
from ..context import Context, Fact, Insight, Risk
from ..lang import lines, noun, num
from ..patch import changes_shipped_code
from ..paths import FileKind
from ..stats import FileStats, WhereNames, grouped_dirs, main_location

# Changed lines of source code at which a commit is medium, per type: a feature grows the product
# faster per line than a refactor moves it. Size alone never makes a commit high: a maintainer
# calls a commit high for what it does (breaks, secures, ships differently), and a 2,000-line
# internal feature is still one team's business.
SIZE_THRESHOLDS: dict[ChangeType, int] = {
    ChangeType.FEATURE: 40,
    ChangeType.PERFORMANCE: 20,
    ChangeType.BUGFIX: 300,
    ChangeType.REFACTOR: 600,
}
DEFAULT_THRESHOLD = 200
WIDE_SOURCE_FILES = 20  # this many source files is medium whatever the line count (not for refactors)

_INLINE_TEST = re.compile(r"^\+\s*(#\[(test|cfg\(test\)|tokio::test)|def test_|func Test|it\(|test\(|@Test)", re.M)
_CODE_TYPES = (
    ChangeType.FEATURE,
    ChangeType.BUGFIX,
    ChangeType.PERFORMANCE,
    ChangeType.REFACTOR,
    ChangeType.OTHER,
    ChangeType.SECURITY,
)
# The kinds of change a reader calls a change to what users run, when the diff bears the kind out.
SHIPPED_CHANGE_TYPES = (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.PERFORMANCE)
# A change the title names no kind for ("Consistent fp32 grads flow", "Force blksize=128 on …") is
# one too when it changes this many lines of code in shipped source: below it, a tweak. Chosen by
# leave-one-repository-out over the labelled sets (round 5: 8 in 11 folds of 12, 3 in the other;
# round 7, with the sixth blind set: 6 in every fold of 17 — lmdeploy, ao and Lightning gain, ruff's
# labeller, who calls small changes low, loses 0.014 κ3).
UNNAMED_CHANGE_CODE_LINES = 6


def _has_tests(c: Context) -> bool:
    """Tests changed: a test file, or tests written inside a source file (Rust `#[test]`)."""
    return bool(c.stats.of(FileKind.TEST)) or any(_INLINE_TEST.search(f.patch or "") for f in c.stats.source)


def facts(c: Context) -> list[Fact]:
    stats = c.stats
    if c.title.preserving or (stats.known and not stats.source):
        return []  # "no behaviour change" by the author's word; tooling-only is capped elsewhere
    n_lines = stats.source_lines
    n_files = len(stats.source)
    adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
    if stats.known:
        internal = [f for f in stats.source if c.profile.is_internal(f.path)]
        n_lines -= sum(f.changes for f in internal)
        n_files -= len(internal)
    if n_lines <= 0 or (c.ctype is ChangeType.REVERT and stats.known and not dels):
        return []  # a revert that only puts deleted code back takes nothing from anyone, however large
    medium_at = SIZE_THRESHOLDS.get(c.ctype, DEFAULT_THRESHOLD)
    kind = noun(c.ctype)
    where = Count(n_files, "counts.file") if stats.known else phrase("offline.size.file_list_unavailable")
    if n_lines >= medium_at:
        return [
            Fact(
                Importance.MEDIUM,
                phrase("offline.size.large_source_change", type=kind, lines=lines(adds, dels), where=where),
                order=50,
                size=True,
            )
        ]
    if stats.known and n_files >= WIDE_SOURCE_FILES and c.ctype is not ChangeType.REFACTOR:
        return [
            Fact(
                Importance.MEDIUM,
                phrase("offline.size.wide_source_change", type=kind, n=n_files),
                order=50,
                size=True,
            )
        ]
    return _shipped_change(c)


def _shipped_change(c: Context) -> list[Fact]:
    """A fix, a feature or a performance change to the code that ships is medium, however small: a
    careful reader of the diff calls it a change users get. The kind (a `fix:` prefix, a [Perf]
    tag, the title's verb) is a hint the diff has to bear out: code lines changed in shipped source.
    Without the patches (a listing that has none) there is nothing to bear it out."""
    if c.ctype not in (*SHIPPED_CHANGE_TYPES, ChangeType.OTHER) or not c.stats.known:
        return []
    if c.title.clearer_error:
        return []  # an error users already got, said better: the behaviour they have is the same
    at_least = UNNAMED_CHANGE_CODE_LINES if c.ctype is ChangeType.OTHER else 1
    if not changes_shipped_code(c.stats, c.profile, at_least):
        return []
    code = [f for f in c.stats.source if not c.profile.is_internal(f.path)]
    part = FileStats(tuple((f, FileKind.SOURCE) for f in code), len(code), 0, 0, True)
    where, _ = main_location(part)
    adds, dels = sum(f.additions for f in code), sum(f.deletions for f in code)
    said = phrase("offline.size.shipped_code_change", type=noun(c.ctype), where=where, lines=lines(adds, dels))
    return [Fact(Importance.MEDIUM, said, order=50, size=True)]


def risks(c: Context) -> list[Risk]:
    """A sizeable code change that brings no test with it: what it changes, by name, and how much.
    A fallback: shown only when nothing more specific applies. There is no risk by change type
    alone ("a bug fix changes behaviour", "new code is unproven"): no risk at all beats a generic one."""
    stats = c.stats
    if not stats.known or not stats.source_lines:
        return []
    removed = [f for f in stats.removed_source if f.path in c.diff.removed_surface_files]
    if c.ctype not in _CODE_TYPES or stats.source_lines < 50 or _has_tests(c) or removed:
        return []
    names = WhereNames(stats, c.diff.hunk_names)
    adds, dels = stats.lines(FileKind.SOURCE)
    return [
        Risk(
            61,
            phrase("offline.size.untested_change", lines=lines(adds, dels), names=names),
            phrase("offline.size.add_tests", names=names),
            fallback=True,
        )
    ]


def insights(c: Context) -> list[Insight]:
    out: list[Insight] = []
    added = c.stats.added_source
    if added:
        (where, _), *_ = grouped_dirs([f.path for f in added])
        n_lines = sum(f.additions for f in added)
        out.append(
            Insight(
                "architecture",
                10,
                phrase(
                    "offline.size.adds_source_files",
                    files=Count(len(added), "offline.size.source_files"),
                    added=num(n_lines),
                    where=where,
                ),
            )
        )
    if c.ctype is ChangeType.PERFORMANCE:
        adds, dels = c.stats.lines(FileKind.SOURCE)
        where, _ = main_location(c.stats) if c.stats.files else ("", False)
        out.append(
            Insight(
                "performance",
                10,
                phrase("offline.size.performance_marked", lines=lines(adds, dels), where=where),
            )
        )
    return out

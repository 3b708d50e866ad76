"""The change type: the author's own label wins; otherwise files of one kind beat a verb;
otherwise the title's verb; otherwise what the body and the source files suggest."""

from __future__ import annotations

import re

from ...core.models import ChangeType, Commit
from .context import DiffFacts
from .evidence import security
from .message import first_paragraphs
from .paths import NESTED_TOOLING_DIRS, FileKind
from .stats import FileStats
from .title import TitleInfo

# "Previously, narrowing was lost …", "Valid calls … currently produce errors", "could panic".
_BUG_STORY = re.compile(
    r"^(previously|currently)\b|\b(could|would|can) (panic|crash|hang|overflow|fail)\b"
    r"|\bfalse (positive|negative)s?\b|\bcurrently (produces?|causes?|fails?|panics?|emits?|reports?)\b",
    re.I,
)


def _files_type(stats: FileStats) -> ChangeType | None:
    """The type the files alone imply when they are all of one non-source family."""
    if not stats.files:
        return None
    kinds = stats.kinds - {FileKind.OTHER, FileKind.GENERATED} or stats.kinds
    families = [
        ({FileKind.DOCS}, ChangeType.DOCS),
        ({FileKind.TEST}, ChangeType.TESTS),
        ({FileKind.DEPENDENCY, FileKind.LOCKFILE}, ChangeType.DEPENDENCIES),
        ({FileKind.CI, FileKind.BUILD}, ChangeType.CI_BUILD),
        ({FileKind.CONFIG}, ChangeType.CONFIG),
    ]
    for family, ctype in families:
        if kinds <= family:
            return ctype
    return None


def _deps_change(diff: DiffFacts) -> bool:
    return bool(
        diff.dep_changes or diff.added_deps or diff.removed_deps or diff.major_bumps or diff.shipped_dep_changes
    )


def decide_change_type(commit: Commit, title: TitleInfo, stats: FileStats, diff: DiffFacts | None = None) -> ChangeType:
    """The author's own label wins; otherwise uniform files beat a verb; otherwise the verb. With
    the diff's facts, manifests whose edits change how the release is built and no dependency
    (`panic = "abort"` under `[profile.release]`) are a build change, not a dependency update."""
    if (commit.reverts and not title.squashed_revert) or title.change_type is ChangeType.REVERT:
        return ChangeType.REVERT
    if security.decides_type(title, stats):
        return ChangeType.SECURITY
    if title.strong and title.change_type is not None:
        return title.change_type
    by_files = _files_type(stats)
    verb = title.change_type
    benchmarked = stats.source and any(
        any(d in NESTED_TOOLING_DIRS or "benchmark" in d for d in f.path.lower().split("/")[:-1])
        for f in stats.of(FileKind.TOOLING)
    )
    if benchmarked and verb in (None, ChangeType.REFACTOR, ChangeType.OTHER):
        return ChangeType.PERFORMANCE  # the author measured it: source changed with its benchmark
    has_manifests = bool(stats.of(FileKind.DEPENDENCY, FileKind.LOCKFILE)) or not stats.files
    if verb is ChangeType.DEPENDENCIES and has_manifests:
        return ChangeType.DEPENDENCIES
    if by_files is ChangeType.DEPENDENCIES and diff is not None and diff.release_edits and not _deps_change(diff):
        return ChangeType.CI_BUILD
    if by_files is not None:
        return by_files
    if verb is not None:
        return verb
    if _BUG_STORY.search(first_paragraphs(commit.body, 600)):
        return ChangeType.BUGFIX  # the body tells how it went wrong before
    src = stats.source
    if src and all(f.status == "removed" for f in src):
        return ChangeType.REMOVAL
    if src and sum(f.additions for f in stats.added_source) > stats.source_lines / 2:
        return ChangeType.FEATURE
    return ChangeType.OTHER

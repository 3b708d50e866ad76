"""Scope: what the change can reach. Ceilings for commits that cannot affect what users run (tests,
docs, CI, tooling, internal paths), for mechanical sweeps (formatting, typos, lint) and for
preview-only work; and the reason given for a low level when no rule fired."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from ....core.models import ChangeType, Importance
from ....i18n import Count, phrase, text
from ..context import Context, Fact
from ..lang import Names, is_zh, lines, noun
from ..paths import NON_RUNTIME, FileKind
from ..stats import FileStats

COSMETIC_BIG = 300  # a lint/format sweep this big (source lines) can still break open branches


class _Kinds:
    """The kinds of file a commit changes, named in the reader's language ('docs and test' /
    '文档、测试'); `capital` when the list opens the sentence ('Docs-only change')."""

    __slots__ = ("kinds", "capital")

    def __init__(self, kinds: Sequence[FileKind], capital: bool = False):
        self.kinds, self.capital = tuple(kinds), capital

    def say(self, lang: str | None) -> str:
        labels = [k.label(is_zh(lang or "")) for k in self.kinds]
        listed = labels[0]
        if len(labels) > 1:
            rest = text(lang, "common.list_sep").join(labels[:-1])
            listed = text(lang, "offline.scope.kinds_and", rest=rest, last=labels[-1])
        if self.capital:
            listed = listed[:1].upper() + listed[1:]
        # "仅改动 CI 配置": Chinese puts a space before Latin text.
        return text(lang, "offline.scope.kinds_latin", kinds=listed) if listed[:1].isascii() else listed


def _only_kinds_fact(stats: FileStats) -> Fact:
    """'仅改动文档（2 个文件）' / 'Docs-only change (2 files)'."""
    files = Count(stats.total_files, "counts.file")
    if stats.only({FileKind.LOCKFILE}):
        names = [f.path for f in stats.of(FileKind.LOCKFILE)]
        return Fact(Importance.LOW, phrase("offline.scope.lockfile_only", names=Names(names, 2)))
    counts = Counter(k for _, k in stats.files)
    kinds = [k for k, _ in counts.most_common()]
    if len(kinds) == 1:
        return Fact(Importance.LOW, phrase("offline.scope.only_kind", kinds=_Kinds(kinds, capital=True), files=files))
    return Fact(Importance.LOW, phrase("offline.scope.only_kinds", kinds=_Kinds(kinds), files=files))


def _tooling_fact(stats: FileStats, level: Importance) -> Fact:
    adds, dels = stats.lines(FileKind.TOOLING)
    n = len(stats.of(FileKind.TOOLING))
    return Fact(level, phrase("offline.scope.tooling_only", files=Count(n, "counts.file"), lines=lines(adds, dels)))


def ceiling(
    c: Context, ci_security_fix: bool, pipeline_hardening: Fact | None, dev_only: Fact | None, releases: bool = False
) -> Fact | None:
    """A ceiling (or, with `floor`, a minimum): changes that cannot affect what users run, and
    mechanical sweeps. The first that applies decides. What the other modules conclude comes in
    (decide.py asks them): a security fix to CI workflows (security.exempts_ci), hardening of the
    release pipeline (security.pipeline_hardening), development-only dependencies
    (dependencies.dev_only), a release commit setting the version users install
    (release.ships_release: it ships everything since the last release, however few files it
    touches)."""
    stats = c.stats
    internal_only = (
        stats.known
        and stats.files
        and all(k in NON_RUNTIME | {FileKind.TOOLING} or c.profile.is_internal(f.path) for f, k in stats.files)
    )
    if internal_only and not c.diff.release_edits and not releases:
        # A security fix to CI workflows is real, and so is hardening the release pipeline; other
        # non-runtime commits are low whatever they claim.
        if ci_security_fix:
            return None
        if pipeline_hardening:
            return pipeline_hardening
        if stats.only(NON_RUNTIME):
            return replace(_only_kinds_fact(stats), firm=True)
        if stats.of(FileKind.TOOLING):
            return replace(_tooling_fact(stats, Importance.LOW), firm=True)
        files = Count(stats.total_files, "counts.file")
        return Fact(Importance.LOW, phrase("offline.scope.internal_only", files=files), firm=True)
    # "Bump eslint" is not a lint change, and backing out a lint fix is still a revert.
    mechanical = (
        c.title.cosmetic
        and not c.title.breaking
        and not c.title.security
        and c.ctype not in (ChangeType.DEPENDENCIES, ChangeType.REVERT)
    )
    if mechanical and (stats.known or stats.total_files):
        big = stats.source_lines >= COSMETIC_BIG
        adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
        size = phrase("offline.scope.cosmetic_size", lines=lines(adds, dels)) if adds or dels else ""
        if big:
            return Fact(Importance.MEDIUM, phrase("offline.scope.cosmetic_wide", size=size))
        return Fact(Importance.LOW, phrase("offline.scope.cosmetic", size=size))
    if dev_only:
        return replace(dev_only, firm=True)
    if c.profile.is_preview(tags=c.title.tags) or (
        stats.source and all(c.profile.is_preview(path=f.path) for f in stats.source)
    ):
        return Fact(Importance.MEDIUM, phrase("offline.scope.preview_only"))
    return None


def baseline(c: Context) -> Fact:
    """The reason for a low level when no rule fired."""
    stats = c.stats
    if not stats.known and not stats.total_files:
        return Fact(Importance.LOW, phrase("offline.scope.no_file_list", type=noun(c.ctype, mid=True)))
    if c.title.preserving and stats.source_lines:
        return Fact(Importance.LOW, phrase("offline.scope.refactor_preserving"))
    if stats.source_lines:
        adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
        n = len(stats.source) if stats.known else stats.total_files
        return Fact(
            Importance.LOW,
            phrase(
                "offline.scope.small_source_change",
                type=noun(c.ctype),
                files=Count(n, "counts.file"),
                lines=lines(adds, dels),
            ),
        )
    # Tooling names the change only when nothing of the build or its manifests changes beside it.
    if stats.of(FileKind.TOOLING) and not stats.of(FileKind.DEPENDENCY, FileKind.BUILD):
        return _tooling_fact(stats, Importance.LOW)
    if stats.of(FileKind.DEPENDENCY):
        names = [f.path for f in stats.of(FileKind.DEPENDENCY)]
        return Fact(Importance.LOW, phrase("offline.scope.manifest_change", names=Names(names, 2)))
    if stats.of(FileKind.BUILD):
        names = [f.path for f in stats.of(FileKind.BUILD)]
        return Fact(Importance.LOW, phrase("offline.scope.build_config_change", names=Names(names, 2)))
    files = Count(stats.total_files, "counts.file")
    return Fact(Importance.LOW, phrase("offline.scope.no_source_change", type=noun(c.ctype), files=files))

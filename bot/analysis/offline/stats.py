"""How much of each kind of file a commit changes, and where the change lives."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.file_kinds import FileKind, classify_path
from ...core.models import Commit, FileChange
from ...i18n import Phrase, is_zh, text

if TYPE_CHECKING:
    from ..repo_config import RepoProfile


@dataclass(frozen=True)
class FileStats:
    files: tuple[tuple[FileChange, FileKind], ...]
    total_files: int
    additions: int
    deletions: int
    known: bool  # False: no file list, only the commit's totals

    def of(self, *kinds: FileKind) -> list[FileChange]:
        return [f for f, k in self.files if k in kinds]

    @property
    def kinds(self) -> frozenset[FileKind]:
        return frozenset(k for _, k in self.files)

    def lines(self, *kinds: FileKind) -> tuple[int, int]:
        chosen = self.of(*kinds)
        return sum(f.additions for f in chosen), sum(f.deletions for f in chosen)

    @property
    def source(self) -> list[FileChange]:
        return self.of(FileKind.SOURCE)

    @property
    def source_lines(self) -> int:
        if not self.known:
            return self.additions + self.deletions
        return sum(f.changes for f in self.source)

    @property
    def removed_source(self) -> list[FileChange]:
        return [f for f in self.source if f.status == "removed"]

    @property
    def added_source(self) -> list[FileChange]:
        return [f for f in self.source if f.status == "added"]

    def only(self, kinds: Iterable[FileKind]) -> bool:
        """True when every file is of one of these kinds (and there is at least one file)."""
        return bool(self.files) and self.kinds <= frozenset(kinds)


@dataclass(frozen=True)
class FileDelta:
    """What one source file's patch adds, removes and changes, by name (any definition the
    patch shows, public or not, tests left out): what the summary names."""

    path: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


def file_stats(commit: Commit, files: Sequence[FileChange]) -> FileStats:
    classified = tuple((f, classify_path(f.path)) for f in files)
    if files:
        return FileStats(
            classified, len(files), sum(f.additions for f in files), sum(f.deletions for f in files), known=True
        )
    return FileStats((), commit.files_changed or 0, commit.additions or 0, commit.deletions or 0, known=False)


def _area(path: str) -> str:
    """The directory a reader would name: two levels deep for nested paths, else the top one."""
    parts = path.strip("/").split("/")
    if len(parts) >= 3:
        return "/".join(parts[:2]) + "/"
    if len(parts) == 2:
        return parts[0] + "/"
    return parts[0]


def areas(stats: FileStats) -> list[tuple[str, int, Counter]]:
    """(area, changed lines, kinds) for every area touched, biggest first."""
    lines: Counter = Counter()
    kinds: dict[str, Counter] = {}
    for f, kind in stats.files:
        a = _area(f.path)
        lines[a] += f.changes or 1
        kinds.setdefault(a, Counter())[kind] += 1
    return [(a, n, kinds[a]) for a, n in sorted(lines.items(), key=lambda x: (-x[1], x[0]))]


def main_location(stats: FileStats) -> tuple[str, bool]:
    """(where the change lives, whether it is entirely there)."""
    paths = [f.path.strip("/") for f, _ in stats.files]
    if len(paths) == 1:
        return paths[0], True
    split = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for level in zip(*split):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    if common:
        return "/".join(common) + "/", True
    return areas(stats)[0][0], False


def grouped_dirs(paths: Sequence[str]) -> list[tuple[str, int]]:
    dirs = Counter(p.rsplit("/", 1)[0] + "/" if "/" in p else "./" for p in paths)
    return dirs.most_common()


def where_names(stats: FileStats, hunk_names: Sequence[str], zh: bool) -> str:
    """'`solutions`, `PathBounds` in crates/…/constraints.rs' — what the hunks name, and where."""
    names = [f"`{n}`" for n in hunk_names[:3]]
    source = tuple((f, k) for f, k in stats.files if k is FileKind.SOURCE)
    pool = FileStats(source, len(source), 0, 0, True) if source else stats
    where, _ = main_location(pool) if pool.files else ("", False)
    if names and where:
        lang = "zh" if zh else "en"
        return text(lang, "offline.stats.names_in", names=text(lang, "common.list_sep").join(names), where=where)
    return where


def patches_unknown(stats: FileStats, profile: RepoProfile) -> bool:
    """No patch of shipped source to read (a listing without patches, or a binary-only change):
    the message's words are all there is, so they count; with the patches at hand, the diff has to
    show what the words say (a word in a title is a hint, not evidence)."""
    shipped = [f for f in stats.source if not profile.is_internal(f.path)]
    return not stats.known or (bool(shipped) and all(f.patch is None for f in shipped))


def runtime_lines(stats: FileStats, profile: RepoProfile) -> int:
    """Changed lines that ship: source outside internal paths, config, build and manifests."""
    if not stats.known:
        return stats.additions + stats.deletions
    return sum(
        f.changes or 1
        for f, k in stats.files
        if k in (FileKind.SOURCE, FileKind.CONFIG, FileKind.BUILD, FileKind.DEPENDENCY)
        and not profile.is_internal(f.path)
    )


class WhereNames:
    """Where a change lives and what its hunks name, as a field told in the reader's language
    ('`a`, `b` in src/x.py' / 'src/x.py 中的 `a`、`b`'); `empty` is said when nothing is known."""

    __slots__ = ("stats", "hunk_names", "empty")

    def __init__(self, stats: FileStats, hunk_names: Sequence[str], empty: Phrase | None = None):
        self.stats, self.hunk_names, self.empty = stats, hunk_names, empty

    def say(self, lang: str | None) -> str:
        where = where_names(self.stats, self.hunk_names, is_zh(lang or ""))
        return where or (self.empty.say(lang) if self.empty is not None else "")

"""The summary: what the diff does, by name — never the title again.

What a reader cannot get from the title is what the patches show: the options, settings,
dependencies and definitions added, removed or changed, the files created, deleted or moved, the
tests added, and how much changed where. `summary_parts` picks the most telling of those facts (read
once, in observe.py) as language-neutral phrases; `tell_summary` says them in one sentence in the
reader's language ("新增 `--format` 选项；新文件 `bot/render/changelog.py`（128 行）（+147/−25 行，5 个文件）").
The commit message only says which kind of commit it is (a revert, a release, a dependency update);
its words are never copied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...core.models import ChangeType, Importance
from ...i18n import Count, Phrase, phrase, text
from .context import Context
from .evidence.dependencies import dependency_updates
from .evidence.release import changelog_entries, new_version
from .lang import Names, lines, num
from .paths import FileKind, classify_path

# How many facts a summary names: one line for a low entry, a little more above.
MAX_PARTS = {Importance.LOW: 2, Importance.MEDIUM: 3, Importance.HIGH: 3}
_VERSION = re.compile(r"v?(\d+\.\d+[\w.+-]*)")
# A changelog fragment (changelog.d/123.bugfix.md) says in prose what the title says: not a new file
# worth naming.
_FRAGMENT = re.compile(r"(^|/)(changelog\.d|changelog|changes|newsfragments|news|\.changeset|unreleased)/[^/]+$", re.I)
# The parts that name a commit's one file already, so its size is said without naming it again.
_NAMES_FILES = frozenset(
    f"offline.said.{key}" for key in ("file_added", "files_deleted.one", "moved", "packaged", "files_added")
)


class Code:
    """Names shown as code (`name`), listed in the reader's language."""

    __slots__ = ("names", "limit")

    def __init__(self, names: Sequence[str], limit: int = 3):
        self.names, self.limit = tuple(names), limit

    def say(self, lang: str | None) -> str:
        return Names([f"`{n}`" for n in self.names], self.limit).say(lang)


class Quoted:
    """Prose names (section headings) in the reader's quotation marks."""

    __slots__ = ("names",)

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)

    def say(self, lang: str | None) -> str:
        quoted = [text(lang, "offline.said.quoted", text=n) for n in self.names]
        return Names(quoted, 2).say(lang)


def _form(key: str, n: int, **fields: object) -> Phrase:
    """`offline.said.<key>.one|other`: English says 'option' or 'options'; Chinese one form."""
    return phrase(f"offline.said.{key}.{'one' if n == 1 else 'other'}", **fields)


def _public_first(names: Sequence[str]) -> list[str]:
    return sorted(dict.fromkeys(names), key=lambda n: n.startswith("_"))


def _message_kind(c: Context) -> list[Phrase]:
    """What the commit is, when the diff alone cannot say: a revert (of which commit), a release
    (which version, how many changelog entries), a dependency update (name old → new)."""
    t = c.title
    if c.ctype is ChangeType.REVERT:
        sha = c.commit.reverts[:7] if c.commit.reverts else ""
        return [phrase("offline.said.reverts", sha=Code([sha])) if sha else phrase("offline.said.reverts_earlier")]
    if t.release:
        m = _VERSION.search(t.subject)
        version = m.group(1) if m else new_version(c.stats)
        entries = changelog_entries(c.stats)
        out = [phrase("offline.said.release", version=version) if version else phrase("offline.said.release_unnamed")]
        if entries:
            out.append(phrase("offline.said.changelog_entries", n=num(entries)))
        return out
    if c.ctype is ChangeType.DEPENDENCIES or c.commit.author.lower().endswith("[bot]"):
        updates = dependency_updates(c.commit, c.stats, c.title)
        if updates:
            shown = [f"`{n}` {o} → {v}" for n, o, v in updates]
            return [_form("updates", len(updates), updates=Names(shown, 3))]
    return []


def _interface(c: Context, deps: bool = True) -> list[Phrase]:
    """Options, settings, environment variables and dependencies (unless `deps` is False: the
    dependency update line names them already): what users pass or install."""
    d = c.diff
    out: list[Phrase] = []
    if d.removed_flags:
        out.append(_form("flags_removed", len(d.removed_flags), flags=Code(d.removed_flags)))
    if d.added_flags:
        out.append(_form("flags_added", len(d.added_flags), flags=Code(d.added_flags)))
    gained = [(flag, values) for flag, values in d.flags_changed if values]
    for flag, values in gained[:2]:
        out.append(phrase("offline.said.flag_values", flag=Code([flag]), values=Code(values, 2)))
    plain = [flag for flag, values in d.flags_changed if not values]
    if plain and not gained:
        out.append(_form("flags_changed", len(plain), flags=Code(plain)))
    for _, key, old, new in d.default_changes[:2]:
        out.append(phrase("offline.said.default", key=Code([key]), old=old, new=new))
    if d.env_added:
        out.append(_form("env_added", len(d.env_added), names=Code(d.env_added)))
    if deps:
        if d.pins:
            shown = [f"`{n}` =={v}" for n, v in d.pins]
            out.append(_form("deps_pinned", len(shown), pins=Names(shown, 2)))
        if d.dep_changes:
            shown = [f"`{n}` {o} → {v}" if o else f"`{n}` → {v}" for n, o, v in d.dep_changes]
            out.append(_form("deps_changed", len(shown), updates=Names(shown, 2)))
        added = [n for n in d.added_deps if n not in dict(d.pins)]
        if added:
            out.append(_form("deps_added", len(added), names=Code(added)))
        if d.removed_deps:
            out.append(_form("deps_removed", len(d.removed_deps), names=Code(d.removed_deps)))
        named = {n for n, _, _ in d.dep_changes} | set(d.added_deps) | set(d.removed_deps) | {n for n, _ in d.pins}
        other = [n for n in d.shipped_dep_changes if n not in named]  # features, sources, markers
        if other:
            out.append(_form("deps_declared", len(other), names=Code(other)))
    return out


def _files(c: Context) -> list[Phrase]:
    """Modules turned into packages, moved or deleted, and new files with their size (source
    first; new test files are named by the tests they add)."""
    d, stats = c.diff, c.stats
    out: list[Phrase] = []
    packaged = {old for old, _ in d.packaged_modules}
    for old, package in d.packaged_modules[:1]:
        modules = sum(1 for f in stats.source if f.path.startswith(package) and f.status != "removed")
        out.append(phrase("offline.said.packaged", module=Code([old]), package=Code([package]), n=num(modules)))
    if d.moved_modules:
        old, new = d.moved_modules[0]
        out.append(phrase("offline.said.moved", old=Code([old]), new=Code([new])))
    gone = [f.path for f, _ in stats.files if f.status == "removed" and f.path not in packaged]
    if gone:
        out.append(_form("files_deleted", len(gone), files=Code(gone, 2)))
    added = sorted(
        (
            f
            for f, kind in stats.files
            if f.status == "added"
            and not (kind is FileKind.TEST and d.tests_added)
            and not _FRAGMENT.search(f.path)
            and not any(f.path.startswith(p) for _, p in d.packaged_modules)
        ),
        key=lambda f: (classify_path(f.path) is not FileKind.SOURCE, -f.additions),
    )
    if len(added) == 1:
        out.append(phrase("offline.said.file_added", file=Code([added[0].path]), n=num(added[0].additions)))
    elif added:
        out.append(phrase("offline.said.files_added", names=Code([f.path for f in added], 2)))
    return out


def _definitions(c: Context) -> list[Phrase]:
    """Definitions removed, added and changed, biggest files first; tests and docs sections added."""
    d = c.diff
    sizes = {f.path: f.changes for f in c.stats.source}
    deltas = sorted(d.deltas, key=lambda x: -sizes.get(x.path, 0))
    new_files = {f.path for f in c.stats.added_source}
    out: list[Phrase] = []
    removed_api = set(d.removed_api)
    if d.removed_api:
        out.append(phrase("offline.said.defs_removed", names=Code(d.removed_api)))
    added = _public_first([n for x in deltas if x.path not in new_files for n in x.added])
    # a new file is named by the files clause; its definitions only when it is all there is
    if not added and not any(x.path not in new_files for x in deltas):
        added = _public_first([n for x in deltas for n in x.added])
    if added:
        out.append(phrase("offline.said.defs_added", names=Code(added)))
    changed = _public_first([n for x in deltas for n in x.changed if n not in removed_api])
    if changed:
        out.append(phrase("offline.said.defs_changed", names=Code(changed)))
    if d.tests_added:
        shown = 1 if len(d.tests_added[0]) > 30 else 2  # test names are long sentences in snake case
        out.append(_form("tests_added", len(d.tests_added), names=Code(d.tests_added, shown)))
    if d.headings_added:
        out.append(_form("sections_added", len(d.headings_added), names=Quoted(d.headings_added)))
    return out


def _where(c: Context, parts: list[Phrase]) -> Phrase:
    """The size and place after the facts ('+12/−3 lines, 3 files'; the one file when not named
    yet), or, when no fact is named, the whole sentence: which files, how much."""
    stats = c.stats
    size = lines(stats.additions, stats.deletions)
    if not stats.known:
        return phrase("offline.said.unlisted", lines=size, files=Count(stats.total_files, "counts.file"))
    paths = [f.path for f, _ in sorted(stats.files, key=lambda fk: -fk[0].changes)]
    if not parts:
        return phrase("offline.said.alone", names=Code(paths, 2), lines=size)
    if len(paths) == 1:
        if any(p.key in _NAMES_FILES for p in parts):
            return phrase("offline.said.size_only", lines=size)
        return phrase("offline.said.size_in", lines=size, where=Code(paths))
    return phrase("offline.said.size", lines=size, files=Count(len(paths), "counts.file"))


# The parts that are the whole summary: nothing more specific is known.
_WHOLE = frozenset(f"offline.said.{key}" for key in ("alone", "unlisted", "no_files"))


def summary_parts(c: Context, importance: Importance) -> list[Phrase]:
    """The facts a summary names, most telling first, language-neutral; the last one is always
    the size and place of the change."""
    if c.stats.known and not c.stats.files:
        return [phrase("offline.said.no_files")]
    kind = _message_kind(c)
    # A dependency update's line names its dependencies; without one, the manifests' edits do.
    deps = not (kind and c.ctype is ChangeType.DEPENDENCIES)
    parts = kind + _interface(c, deps) + _files(c) + _definitions(c)
    parts = parts[: MAX_PARTS[importance]]
    return parts + [_where(c, parts)]


def tell_summary(parts: Sequence[Phrase], lang: str) -> str:
    """One sentence: the facts joined by the language's separator, then the size in brackets."""
    *facts, where = parts
    if where.key in _WHOLE:
        return where.say(lang)
    said = text(lang, "offline.prose.clause_sep").join(p.say(lang) for p in facts)
    said = text(lang, "offline.said.sentence", facts=said, where=where.say(lang))
    return said[:1].upper() + said[1:]


def build_summary(c: Context, importance: Importance, zh: bool) -> str:
    return tell_summary(summary_parts(c, importance), "zh" if zh else "en")

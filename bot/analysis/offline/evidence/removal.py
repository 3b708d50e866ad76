"""Removals: deleted public source files, public definitions and command-line flags that are gone,
modules moved away from their import path, and functionality removed or deprecated."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....core.models import ChangeType, Importance
from ....i18n import Count, phrase
from ..context import Context, Fact, Insight, Risk
from ..lang import Names, num
from ..patch import code_of, diff_lines
from ..paths import FileKind, extension, is_experimental
from ..stats import grouped_dirs

if TYPE_CHECKING:
    from ...repo_config import RepoProfile
    from ..stats import FileStats

_WORD = re.compile(r"[A-Za-z_]\w*")
_IMPORT_PATH_EXT = frozenset({"py", "go", "ts", "tsx", "js", "jsx", "mjs", "rs"})


# --- reading the files ---------------------------------------------------------------------------


def removed_api(removed_defs: dict[str, bool], added_defs: set[str]) -> tuple[list[str], bool]:
    """(public definitions deleted and neither defined nor re-exported anywhere in the commit,
    whether any was in a deleted file), from scan.SourceScan's `removed_defs` and `added_defs`."""
    names = sorted(n for n in removed_defs if n not in added_defs)
    return names, any(removed_defs[n] for n in names)


def still_spelled(stats: FileStats, names: list[str]) -> set[str]:
    """The removed names that an added line of code still spells: an alias kept for the old name
    (`old = new`, `from .x import new as old`, a table of old names), so it is still importable."""
    wanted = set(names)
    found: set[str] = set()
    for f in stats.source:
        ext = extension(f.path)
        for sign, text in diff_lines(f.patch):
            if sign == "+" and wanted & set(_WORD.findall(text)) and code_of(text, ext):
                found |= wanted & set(_WORD.findall(text))
    return found


# The files that make a directory importable under the name a module file had: `x.py` becomes the
# package `x/` (its `__init__.py`), `x.rs` the module directory `x/` (its `mod.rs`), `x.ts` `x/index.ts`.
_PACKAGE_FILES = {
    "py": ("__init__.py", "__init__.pyi"),
    "pyi": ("__init__.pyi", "__init__.py"),
    "rs": ("mod.rs",),
    "ts": ("index.ts", "index.tsx"),
    "tsx": ("index.tsx", "index.ts"),
    "js": ("index.js", "index.mjs"),
    "mjs": ("index.mjs", "index.js"),
}


def package_of(path: str, paths_after: frozenset[str]) -> str:
    """The package directory (`bot/redact/`) that keeps a module file's import path (`bot/redact.py`)
    after the commit, '' when none does: the module became a package, nothing was removed."""
    stem, dot, ext = path.rpartition(".")
    if not dot:
        return ""
    return next((stem + "/" for name in _PACKAGE_FILES.get(ext, ()) if f"{stem}/{name}" in paths_after), "")


def _paths_after(stats: FileStats) -> frozenset[str]:
    return frozenset(f.path for f, _ in stats.files if f.status != "removed")


def packaged_modules(stats: FileStats) -> list[tuple[str, str]]:
    """(module file, package directory) for each module file this commit turns into a package of
    the same import path (deleted or renamed into it)."""
    after = _paths_after(stats)
    out: list[tuple[str, str]] = []
    for f in stats.source:
        old = f.path if f.status == "removed" else (f.previous_path or "") if f.status == "renamed" else ""
        package = package_of(old, after) if old else ""
        if package:
            out.append((old, package))
    return out


def moved_modules(stats: FileStats, profile: RepoProfile) -> list[tuple[str, str]]:
    """(old path, new path) of public importable source files that were renamed away from their
    import path (a module moved into a package of its own name keeps it)."""
    after = _paths_after(stats)
    return [
        (f.previous_path, f.path)
        for f in stats.source
        if f.status == "renamed"
        and f.previous_path
        and f.previous_path != f.path
        and extension(f.path) in _IMPORT_PATH_EXT
        and profile.is_public(f.previous_path)
        and not package_of(f.previous_path, after)
    ]


def removed_surface_files(stats: FileStats, profile: RepoProfile) -> list[str]:
    """Deleted public source files whose import path is gone (not turned into a package)."""
    after = _paths_after(stats)
    return [f.path for f in stats.removed_source if profile.is_public(f.path) and not package_of(f.path, after)]


def _removed_files(c: Context):
    return [f for f in c.stats.removed_source if f.path in c.diff.removed_surface_files]


# --- conclusions ---------------------------------------------------------------------------------


_WARNS = re.compile(r"\bwarn\w*\s*\(|@deprecated\b|#\[deprecated\b|@Deprecated\b")
_DEPRECATES = re.compile(r"deprecat\w*|FutureWarning", re.I)


def deprecating_files(c: Context) -> list[str]:
    """Shipped source files whose added lines warn that something is deprecated (a warning call
    or a deprecation marker, and the word or FutureWarning): the first step of a removal."""
    found = []
    for f in c.stats.source:
        if (
            c.profile.is_internal(f.path)
            or not f.patch
            or ("eprecat" not in f.patch and "FutureWarning" not in f.patch)
        ):
            continue  # the words first: most patches have neither, and reading their lines costs
        added = "\n".join(text for sign, text in diff_lines(f.patch) if sign == "+")
        if _WARNS.search(added) and _DEPRECATES.search(added):
            found.append(f.path)
    return found


def _ends_deprecation(c: Context) -> bool:
    """The removal is the last step of a deprecation — the deleted code warned that it would go
    (a warning call or a deprecation marker, and the word or FutureWarning; a class merely named
    `Deprecated` warned nobody) — or ships in a release commit: the break users were told of."""
    if c.title.release:
        return True
    for f in c.stats.source:
        if (
            c.profile.is_internal(f.path)
            or not f.patch
            or ("eprecat" not in f.patch and "FutureWarning" not in f.patch)
        ):
            continue
        deleted = "\n".join(text for sign, text in diff_lines(f.patch) if sign == "-")
        if _WARNS.search(deleted) and _DEPRECATES.search(deleted):
            return True
    return False


def _experimental_only(c: Context) -> bool:
    """What the commit deletes from shipped source is experimental code (nine lines in ten, so a
    stray import elsewhere does not count): no stability promise is broken, so never high."""
    touched = [f for f in c.stats.source if f.deletions and not c.profile.is_internal(f.path)]
    gone = sum(f.deletions for f in touched)
    return bool(gone) and sum(f.deletions for f in touched if is_experimental(f.path, c.profile)) >= 0.9 * gone


def documented_removals(c: Context) -> list[str]:
    """The removed public definitions that the docs or examples deleted in this commit spelled:
    API users were shown how to call (a modifier a recipe names, a function a guide imports), not
    a helper nobody was told of."""
    api = set(c.diff.removed_api)
    if not api:
        return []
    named: set[str] = set()
    for f in c.stats.of(FileKind.DOCS):
        if f.deletions and f.patch:
            for sign, text in diff_lines(f.patch):
                if sign == "-" and api & set(_WORD.findall(text)):
                    named |= api & set(_WORD.findall(text))
    return sorted(named)


# Directories holding a project's packages rather than being one (`src/torchao`, `python/sglang`).
_LAYOUT_DIRS = frozenset({"src", "python", "lib", "py"})
_IMPORTED = re.compile(r"^\s*from\s+\S+\s+import\b|^\s*import\s")
_LISTED = re.compile(r"""^\s*["']?([A-Za-z]\w*)["']?\s*,?\s*(?:#.*)?$""")


def _top_package(path: str) -> bool:
    """A package's root `__init__.py` or one of its first-level subpackages' (`torchao/__init__.py`,
    `torchao/quantization/__init__.py`): the import paths users type. Deeper packages group
    implementation (`flashinfer/cute_dsl/sparse/`) and private ones (`_internal/`) promise nothing."""
    dirs = path.split("/")[:-1]
    while dirs and dirs[0] in _LAYOUT_DIRS:
        dirs = dirs[1:]
    return 1 <= len(dirs) <= 2 and not any(d.startswith("_") for d in dirs)


def dropped_exports(stats: FileStats, profile: RepoProfile, added_defs: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    """(package `__init__.py`, names) for each top package (`_top_package`) whose imports or
    `__all__` lose public names that no line of it still spells (an alias kept, a name moved
    within the file) and no package entry re-exports: `from torchao.quantization import
    int_scaled_matmul` fails after the commit."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for f in stats.source:
        if not f.deletions or not f.patch or f.path.rsplit("/", 1)[-1] != "__init__.py" or not _top_package(f.path):
            continue
        if not profile.is_public(f.path) or is_experimental(f.path, profile):
            continue
        gone: list[str] = []
        kept: set[str] = set()
        listing = False  # inside an import's parentheses or `__all__`
        for sign, text in diff_lines(f.patch):
            if sign == "@":
                listing = False
                continue
            code = text.split("#", 1)[0]
            if sign != "-":
                kept.update(_WORD.findall(code))
            if _IMPORTED.match(code) or "__all__" in code:
                listing = "(" in code or "[" in code
                if sign == "-" and "import" in code:
                    gone += _WORD.findall(code.rsplit("import", 1)[1])
            elif listing:
                if sign == "-" and (m := _LISTED.match(code)):
                    gone.append(m.group(1))
                if ")" in code or "]" in code:
                    listing = False
        names = tuple(
            n
            for n in dict.fromkeys(gone)
            if not n.startswith("_") and n not in kept and n not in added_defs and n != "as"
        )
        if names:
            out.append((f.path, names))
    return out


# A hunk inside a configuration class (the header git prints names it) and a field it deletes: one
# annotated name at class level, not a parameter line of a signature (those end with a comma).
_CONFIG_CLASS = re.compile(
    r"^@@[^@\n]*@@\s*class\s+\w*(Config|Configuration|Args|Arguments|Settings|Options|Params|Parameters)\b", re.M
)
_CONFIG_NAME = re.compile(r"(Config|Configuration|Args|Arguments|Settings|Options|Params|Parameters)$")
_CLASS_FIELD = re.compile(r"^    ([a-z]\w*)\s*:\s*[^=\n]+?(=.*)?$")


def removed_config_fields(c: Context) -> list[str]:
    """Fields deleted from a public configuration class (`OptimizerConfig.soap_precondition_frequency`)
    in shipped Python source, named nowhere in what the commit adds: a config, YAML or script that
    sets such a field fails to load after the commit (round 8)."""
    if c.ctype in (ChangeType.TESTS, ChangeType.DOCS):
        return []
    names = c.diff.hunk_names  # the first six the headers name: a config class among them, or more to read
    if len(names) < 6 and not any(_CONFIG_NAME.search(n) for n in names):
        return []
    gone: list[str] = []
    for f in c.stats.source:
        patch = f.patch or ""
        # one search of the patch for such a hunk header before its lines are read
        if not f.deletions or extension(f.path) != "py" or "@@ class " not in patch or not _CONFIG_CLASS.search(patch):
            continue
        if c.profile.is_internal(f.path) or not c.profile.is_public(f.path) or is_experimental(f.path, c.profile):
            continue
        inside = False
        for sign, text in diff_lines(patch):
            if sign == "@":
                inside = bool(_CONFIG_CLASS.match(text))
            elif inside and text[:1] and not text[:1].isspace():
                inside = False  # a statement at module level: the class has ended
            elif inside and sign == "-" and not text.rstrip().endswith(",") and (m := _CLASS_FIELD.match(text)):
                gone.append(m.group(1))
    if not gone:
        return []
    added = {
        w for f in c.stats.files for sign, text in diff_lines(f[0].patch) if sign == "+" for w in _WORD.findall(text)
    }
    return [n for n in dict.fromkeys(gone) if n not in added]


def _pairs(c: Context) -> Names:
    return Names([f"{old} → {new}" for old, new in c.diff.renamed_api])


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    experimental = _experimental_only(c)
    removed = _removed_files(c)
    gone = sum(f.deletions for f in removed)
    in_files = c.diff.removed_api_in_removed_files and bool(removed)
    if removed:
        n = len(removed)
        level = Importance.HIGH if (n >= 5 or gone >= 300) and not experimental else Importance.MEDIUM
        if in_files:
            files = Count(n, "offline.removal.files_with_api")
            said = phrase("offline.removal.removes_api_in_files", files=files, gone=num(gone))
        else:
            files = Count(n, "offline.removal.public_source_files")
            said = phrase("offline.removal.deletes_public_files", files=files, gone=num(gone))
        facts.append(Fact(level, said, order=30))
    api = c.diff.removed_api
    if api and not in_files:
        high = len(api) >= 5 or _ends_deprecation(c)
        level = Importance.HIGH if high and not experimental else Importance.MEDIUM
        facts.append(Fact(level, phrase("offline.removal.callers_must_migrate", names=Names(api)), order=31))
    documented = documented_removals(c) if not experimental else []
    if documented:
        # The docs and examples that showed users this API go with it: users were told to use it.
        facts.append(Fact(Importance.HIGH, phrase("offline.removal.documented_api", names=Names(documented)), order=29))
    if c.diff.dropped_exports and not experimental:
        where, names = c.diff.dropped_exports[0]
        said = phrase("offline.removal.drops_exports", names=Names(list(names)), where=where)
        facts.append(Fact(Importance.HIGH, said, order=29))
    fields = removed_config_fields(c)
    if fields:
        facts.append(
            Fact(Importance.HIGH, phrase("offline.removal.removes_config_fields", names=Names(fields)), order=31)
        )
    if c.diff.renamed_api:
        # A rename breaks callers as a removal does, but names what to call instead: never high on its own.
        facts.append(Fact(Importance.MEDIUM, phrase("offline.removal.renames_api", pairs=_pairs(c)), order=31))
    if c.diff.removed_flags:
        flags = c.diff.removed_flags
        what = phrase(f"offline.removal.flag_word.{'one' if len(flags) == 1 else 'other'}")
        level = Importance.MEDIUM if experimental else Importance.HIGH
        facts.append(Fact(level, phrase("offline.removal.removes_flags", what=what, flags=Names(flags)), order=32))
    if c.ctype is ChangeType.REMOVAL and not removed and not api and c.stats.source_lines and not c.title.preserving:
        deleted = c.stats.lines(FileKind.SOURCE)[1] if c.stats.known else c.stats.deletions
        if deleted >= 20:
            facts.append(
                Fact(Importance.MEDIUM, phrase("offline.removal.removes_functionality", deleted=num(deleted)), order=33)
            )
    deprecating = deprecating_files(c) if c.ctype not in (ChangeType.TESTS, ChangeType.DOCS) else []
    if deprecating and not facts and not c.title.preserving:
        # Users see the warning from this release on and have to move off before the removal.
        facts.append(
            Fact(Importance.MEDIUM, phrase("offline.removal.deprecates", where=Names(deprecating, 2)), order=33)
        )
    if c.diff.moved_modules:
        moved = [old for old, _ in c.diff.moved_modules]
        said = phrase(
            "offline.removal.moves_modules", modules=Count(len(moved), "offline.removal.modules"), names=Names(moved, 2)
        )
        facts.append(Fact(Importance.MEDIUM, said, order=34))
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []
    diff = c.diff
    removed = _removed_files(c)
    if removed:
        names = Names([f.path for f in sorted(removed, key=lambda f: -f.deletions)], 2)
        out.append(
            Risk(
                30,
                phrase("offline.removal.imports_fail", names=names),
                phrase("offline.removal.migrate_imports_first"),
            )
        )
    if diff.removed_api:
        api = Names(diff.removed_api)
        out.append(
            Risk(
                31,
                phrase("offline.removal.calls_fail", names=api),
                phrase("offline.removal.replace_uses", names=api),
            )
        )
    if diff.renamed_api:
        olds = Names([old for old, _ in diff.renamed_api])
        out.append(
            Risk(
                31,
                phrase("offline.removal.renamed_calls_fail", pairs=_pairs(c)),
                phrase("offline.removal.rename_uses", names=olds),
            )
        )
    if diff.moved_modules:
        old, new = diff.moved_modules[0]
        out.append(
            Risk(
                32,
                phrase("offline.removal.old_path_fails", old=old, new=new),
                phrase("offline.removal.update_imports"),
            )
        )
    if diff.removed_flags:
        out.append(
            Risk(
                33,
                phrase("offline.removal.scripts_fail", flags=Names(diff.removed_flags)),
                phrase("offline.removal.check_launch_scripts"),
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    removed = c.stats.removed_source
    if not removed:
        return []
    (where, n), *_ = grouped_dirs([f.path for f in removed])
    files = Count(len(removed), "offline.removal.source_files")
    return [Insight("architecture", 20, phrase("offline.removal.deletes_source_files", files=files, n=n, where=where))]

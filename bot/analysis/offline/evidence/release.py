"""Release evidence: release commits, how shipped artefacts are built (release profiles, compiler
flags, toolchain floors, container images), which runtimes are supported, and the pipeline."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....core.models import ChangeType, FileChange, Importance
from ....i18n import phrase
from ..context import Context, Fact, Insight, Risk
from ..lang import Names
from ..patch import diff_lines, manifest_blocks
from ..paths import DOCKER_FILE, FileKind, shipped_manifest

if TYPE_CHECKING:
    from ...repo_config import RepoProfile
    from ..stats import FileStats

_PROFILE_KEYS = re.compile(
    r"^\s*(panic|lto|codegen-units|opt-level|strip|debug|debug-assertions|overflow-checks"
    r"|incremental|rpath)\s*=\s*(.+?)\s*$"
)
_TOOLCHAIN_FLOOR = re.compile(
    r"""^\s*["']?(rust-version|requires-python|python_requires|msrv)["']?\s*[=:]\s*["']?"""
    r"""([^"',]+)["']?""",
    re.I,
)
_COMPILER_FLAGS = re.compile(
    r"(RUSTFLAGS|rustflags|target-cpu|target-feature|CFLAGS|CXXFLAGS|-march=|-mtune=|-O[0-3s]\b"
    r"|-ffast-math|-flto)"
)
_PANIC_ABORT = re.compile(r"""panic\s*=\s*["']?abort""")


# --- reading the files ---------------------------------------------------------------------------


def _file_edits(f: FileChange, kind: FileKind, profile: RepoProfile, ci_images: bool = False) -> list[str]:
    edits: list[str] = []
    name = f.path.rsplit("/", 1)[-1].lower()
    ships = shipped_manifest(f.path, profile)
    # The image users pull is a shipped artefact: its base, entry point or layout changing counts
    # (an unknown patch too, since any line may be one of those) — unless the images are the CI's.
    if (
        not ci_images
        and kind is FileKind.BUILD
        and DOCKER_FILE.match(name)
        and not profile.is_internal(f.path)
        and (
            f.patch is None
            or re.search(r"^[+-]\s*(FROM|WORKDIR|ENTRYPOINT|CMD|USER|EXPOSE|ENV|VOLUME)\b", f.patch, re.M)
        )
    ):
        edits.append(f.path)
    for group, minus, plus in manifest_blocks(f.patch):
        in_profile = group.lower().startswith("profile.") or "profile" in group.lower()
        release_profile = in_profile and not re.search(r"\b(dev|test|bench)\b", group.lower())
        for line in plus or minus:
            m = _PROFILE_KEYS.match(line)
            if m and name == "cargo.toml" and (release_profile or (not group and not in_profile)):
                where = f" [{group}]" if group else ""
                edits.append(f"{m.group(1)} = {m.group(2)}{where}")

            if (
                name in (".cargo/config.toml", "config.toml", "build.rs", "cmakelists.txt", "setup.py")
                and _COMPILER_FLAGS.search(line)
                and (f.path.startswith(".cargo/") or name != "config.toml")
            ):
                flags = (
                    " ".join(
                        dict.fromkeys(
                            re.findall(
                                r"-march=[\w.-]+|-mtune=[\w.-]+|-O[0-3s]\b|-ffast-math|-flto"
                                r"|target-(?:cpu|feature)=\S+",
                                line,
                            )
                        )
                    )
                    or "flags"
                )
                edits.append(f"{flags.strip(chr(34))} ({f.path})")
        old_floor = next((m.group(2).strip() for ln in minus if (m := _TOOLCHAIN_FLOOR.match(ln))), "")
        new_floor = next((m for ln in plus if (m := _TOOLCHAIN_FLOOR.match(ln))), None)
        # a floor in a manifest the commit creates is set, not changed (a new project, a new member)
        if new_floor and ships and f.status != "added" and old_floor != new_floor.group(2).strip():
            span = f"{old_floor} → {new_floor.group(2).strip()}" if old_floor else new_floor.group(2).strip()
            edits.append(f"{new_floor.group(1)} {span}")
    return edits


def release_edits(stats: FileStats, profile: RepoProfile, ci_declared: bool = False) -> list[str]:
    """Edits that change how shipped artefacts are built: "panic = \"abort\" [profile.release]",
    "rust-version 1.95 → 1.96", a Dockerfile's base image. A commit its author labels CI work (a
    `ci:` prefix, a [CI] tag) that changes no shipped source edits the CI's container images, not
    the ones users pull: the label is a hint, and a diff that leaves the code alone bears it out."""
    ci_images = ci_declared and not any(not profile.is_internal(f.path) for f in stats.source)
    found: list[str] = []
    for f, kind in stats.files:
        if kind in (FileKind.DEPENDENCY, FileKind.BUILD, FileKind.CONFIG):
            edits = _file_edits(f, kind, profile, ci_images)
            found += [e for e in edits if e not in found]
    return found


def changelog_entries(stats: FileStats) -> int:
    for f in stats.files:
        if f[0].path.rsplit("/", 1)[-1].lower().startswith(("changelog", "changes", "history", "news")):
            return sum(1 for sign, text in diff_lines(f[0].patch) if sign == "+" and re.match(r"\s*[-*]\s+\S", text))
    return 0


def new_version(stats: FileStats) -> str:
    for f, _ in stats.files:
        for sign, text in diff_lines(f.patch):
            m = re.match(r"""^\s*(?:version|VERSION)\s*[=:]\s*["']v?(\d+\.\d+[\w.+-]*)["']""", text)
            if sign == "+" and m:
                return m.group(1)
    return ""


# A version a release ships: "1.9.0", `version = "2.0"`, `__version__ = "0.20.0"` — not a
# development or pre-release one ("1.10.0.dev0", "2.0rc1", "3.0-SNAPSHOT").
_SET_VERSION = re.compile(
    r"""^\s*(?:(?:__version__|version|VERSION)\s*[=:]\s*)?["']?v?(\d+(?:\.\d+)+[\w.+-]*)["']?\s*,?\s*$"""
)
_PRE_RELEASE = re.compile(r"(dev|a|alpha|b|beta|rc|pre|snapshot|nightly)\d*", re.I)


def sets_release_version(stats: FileStats) -> bool:
    """The commit sets a version a release ships (an added line that is the version and nothing
    else, or a `version` key), not a development one."""
    for f, _ in stats.files:
        for sign, text in diff_lines(f.patch):
            m = _SET_VERSION.match(text) if sign == "+" else None
            if m and not _PRE_RELEASE.search(m.group(1).split(".", 2)[-1]):
                return True
    return False


def runtime_borne_out(c: Context) -> bool:
    """The runtime the title names ("Python 3.14") is in a changed line of code or configuration
    outside tests and docs (a classifier, a CI matrix entry, a version check) — not only in a
    comment beside a warning filter. Without patches there is nothing to say otherwise."""
    number = re.search(r"\d+(\.\d+)?$", c.title.runtime_support)
    if not number:
        return True
    version = number.group(0)
    said = re.compile(rf"(?<![\d.]){re.escape(version)}(?![\d])|\b(py|cp)?{version.replace('.', '')}\b")
    files = [f for f, kind in c.stats.files if kind not in (FileKind.TEST, FileKind.DOCS)]
    if any(f.patch is None for f in files):
        return True
    return any(sign in "+-" and said.search(_uncommented(text)) for f in files for sign, text in diff_lines(f.patch))


def _uncommented(line: str) -> str:
    """A line without its comment (`#` or `//`, whole or trailing); strings are kept: a classifier
    or a matrix entry is a string."""
    text = line.strip()
    if text.startswith(("#", "//", "/*", "*")):
        return ""
    return re.split(r"\s(?:#|//)\s", text, maxsplit=1)[0]


def ships_release(c: Context) -> bool:
    """A release commit (by its title) that sets a version users install."""
    return c.title.release and sets_release_version(c.stats)


# --- conclusions ---------------------------------------------------------------------------------


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    t, d = c.title, c.diff
    if d.release_edits:
        edits = Names(d.release_edits, 2)
        facts.append(
            Fact(Importance.MEDIUM, phrase("offline.release.changes_how_shipped_is_built", edits=edits), order=44)
        )
    # A fix (by its type) that names a crash: "Abort panics in release builds" changes how a panic
    # ends, it fixes none — the word is a hint, the fix has to be what the commit says it is.
    if (
        t.crash
        and ChangeType.BUGFIX in (c.ctype, t.change_type)
        and (d.release_edits or d.shipped_dep_changes)
        and not c.stats.source
    ):
        # The shipped program itself crashed and the fix is in how it is built: every user on the
        # affected platform was hit, whatever the size of the diff.
        names = Names(d.release_edits or d.shipped_dep_changes, 2)
        facts.append(Fact(Importance.HIGH, phrase("offline.release.fixes_shipped_crash", names=names), order=45))
    if (
        t.runtime_support
        and (c.stats.source or c.stats.of(FileKind.BUILD, FileKind.DEPENDENCY))
        and runtime_borne_out(c)
    ):
        facts.append(
            Fact(
                Importance.MEDIUM,
                phrase("offline.release.changes_supported_runtimes", runtime=t.runtime_support),
                order=47,
            )
        )
    if t.release:
        facts.append(Fact(Importance.MEDIUM, phrase("offline.release.release_commit"), order=48))
    return facts


def _edit_risk(edit: str) -> Risk:
    """What one edit of the release build may break, by what it edits."""
    if _PANIC_ABORT.search(edit):
        return Risk(
            42, phrase("offline.release.panic_ends_process", edit=edit), phrase("offline.release.check_unwind_cleanup")
        )
    if re.match(r"(rust-version|requires-python|python_requires|msrv)", edit, re.I):
        return Risk(
            42, phrase("offline.release.toolchain_floor", edit=edit), phrase("offline.release.check_toolchains")
        )
    if DOCKER_FILE.match(edit.rsplit("/", 1)[-1].lower()):
        return Risk(42, phrase("offline.release.container_image", edit=edit), phrase("offline.release.stage_new_image"))
    return Risk(42, phrase("offline.release.every_artefact", edit=edit), phrase("offline.release.verify_each_platform"))


def risks(c: Context) -> list[Risk]:
    out = [_edit_risk(edit) for edit in c.diff.release_edits[:2]]
    support = c.title.runtime_support
    if support:
        out.append(
            Risk(
                46,
                phrase("offline.release.runtime_support", runtime=support),
                phrase("offline.release.test_on_runtime", runtime=support),
            )
        )
    if FileKind.CI in c.stats.kinds:
        ci = Names([f.path for f in c.stats.of(FileKind.CI)], 2)
        out.append(
            Risk(
                66,
                phrase("offline.release.pipeline_changes", pipeline=ci),
                phrase("offline.release.watch_next_run"),
                fallback=True,
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    return []

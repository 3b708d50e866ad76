"""The records the evidence modules share: what one commit shows, and what a rule concludes.

`Context` is everything known about the commit once it has been read (title, files, patches,
type, profile). Each evidence module turns it into `Fact`s (a level and the sentence saying
why), `Risk`s (what may break, paired with what to do) and `Insight`s (notes by aspect).

Every conclusion carries an `order`: the analyser names the two first facts at the decisive level
and lists the five first risks, so the order is part of the output. Lower comes first; the
numbers are spaced by evidence kind and are listed together in evidence/__init__.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.models import ChangeType, Commit, Importance, Judgement
from ...i18n import Phrase
from ..repo_config import RepoProfile
from .stats import FileDelta, FileStats
from .title import TitleInfo


@dataclass(frozen=True)
class DiffFacts:
    """What the patches (and paths) show beyond line counts; built by observe.diff_facts."""

    removed_api: tuple[str, ...] = ()  # public definitions deleted and not re-added anywhere
    removed_api_in_removed_files: bool = False
    renamed_api: tuple[tuple[str, str], ...] = ()  # (old, new): a public definition replaced by another name
    removed_flags: tuple[str, ...] = ()
    added_flags: tuple[str, ...] = ()
    default_changes: tuple[tuple[str, str, str, str], ...] = ()  # (path, key, old, new)
    major_bumps: tuple[tuple[str, str, str], ...] = ()  # (package, old, new)
    added_deps: tuple[str, ...] = ()
    removed_deps: tuple[str, ...] = ()
    security_paths: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()  # shipped source files whose patch adds a check that refuses input
    refusal_checks: tuple[tuple[str, str, str], ...] = ()  # (path, what refuses, the check as written)
    gpu_kernels: tuple[str, ...] = ()
    moved_modules: tuple[tuple[str, str], ...] = ()  # (old path, new path) of importable files
    removed_surface_files: tuple[str, ...] = ()  # deleted source files on the public surface
    grown_returns: tuple[tuple[str, str, int, int], ...] = ()  # (path, function, values before, after)
    dropped_exports: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (top package __init__, names it exports no more)
    release_edits: tuple[str, ...] = ()  # "panic = \"abort\" in [profile.release]", "rust-version 1.95 → 1.96"
    shipped_dep_changes: tuple[str, ...] = ()  # dependencies of what ships (not dev/test groups)
    dev_only_deps: bool = False  # every dependency edit is in a dev/test/docs group or tooling
    surface_kinds: tuple[str, ...] = ()  # profile surface kinds touched ("cli", "settings" …)
    hunk_names: tuple[str, ...] = ()  # functions/classes named by the hunk headers of source files
    # What the summary names (read in the same pass over the patches, patch.scan_source):
    flags_changed: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (flag, values its call gains)
    packaged_modules: tuple[tuple[str, str], ...] = ()  # (module file, the package now holding its path)
    deltas: tuple[FileDelta, ...] = ()  # per source file: definitions added, removed, changed
    tests_added: tuple[str, ...] = ()
    headings_added: tuple[str, ...] = ()
    env_added: tuple[str, ...] = ()  # environment variables the code starts reading
    bounds_work: bool = False  # added code keeps a visited set, a memo, a limit or a deadline
    dep_changes: tuple[tuple[str, str, str], ...] = ()  # (name, old, new) shipped requirements re-versioned
    pins: tuple[tuple[str, str], ...] = ()  # (name, version) shipped requirements newly pinned to one version
    forced_upgrades: tuple[tuple[str, str, str], ...] = ()  # (name, old bound, new floor): every old install below it


@dataclass(frozen=True)
class Context:
    commit: Commit
    title: TitleInfo
    stats: FileStats
    diff: DiffFacts
    ctype: ChangeType
    profile: RepoProfile = RepoProfile()
    judgement: Judgement | None = None  # the learned profile's view (bot/taste), when there is one


def _lang(zh: bool) -> str:
    return "zh" if zh else "en"


@dataclass(frozen=True)
class Fact:
    """One rule that fired: the level it asks for and how to say it (a catalogue phrase under
    `offline.<module>`, told in the digest's language)."""

    level: Importance
    said: Phrase
    order: int = 0  # where it is named among the facts at its level (lower first)
    size: bool = False  # a size rule: supporting evidence, not a specific fact
    floor: bool = False  # a minimum rather than a ceiling (scope.ceiling)
    firm: bool = False  # a ceiling the learned profile never lifts (nothing that ships changes)

    def text(self, zh: bool) -> str:
        return self.said.say(_lang(zh))


@dataclass(frozen=True)
class Risk:
    """What may break, and what to do about it: `Risk(order, phrase(risk), phrase(advice))`."""

    order: int
    risk: Phrase
    advice: Phrase
    fallback: bool = False  # generic: shown only when no specific risk applies, and only the first

    def text(self, zh: bool) -> tuple[str, str]:
        return self.risk.say(_lang(zh)), self.advice.say(_lang(zh))


@dataclass(frozen=True)
class Insight:
    """One note for the architecture, performance or security line of the insights."""

    aspect: str  # "architecture", "performance" or "security"
    order: int
    said: Phrase

    def text(self, zh: bool) -> str:
        return self.said.say(_lang(zh))

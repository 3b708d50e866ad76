"""Reading a commit's title: its type (conventional prefix, bracket tags, verbs), its tags and
scope, and the markers the evidence modules look for in the message (their words are in words.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ...core.models import ChangeType
from . import words
from .message import first_paragraphs
from .words import clearer_error

_PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
_BRACKET = re.compile(r"\[([^\[\]]{1,40})\]\s*:?")
# "fix(api)!: …", also with a full-width colon ("TEST：…", as typed with a Chinese keyboard).
_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?\s*[:：]\s*(?P<rest>.+)$")
# NumPy-style labels in capitals, also without a colon: "ENH Add …", "BUG: …", "MAINT …".
_CAPITAL_LABEL = re.compile(
    r"^(?P<type>ENH|BUG|FIX|DOC|DOCS|TST|TEST|MNT|MAINT|BLD|PERF|STY|REV|REL|CI)\b\s*:?\s+(?P<rest>\S.*)$"
)
_AREA_PREFIX = re.compile(r"^[\w./-]{1,40}:\s+(?=\S)")  # Go style "net/http: fix …": an area
_REVERT_TITLE = re.compile(r"""^\s*revert(?:ed|s)?\b\s*:?\s*["“']?(?P<inner>.*?)["”']?\s*$""", re.I)
# A squash merge lists its commits ('* Revert "…"' and, below it, git's "This reverts commit …"):
# that revert undid an earlier commit of the same pull request, not anything that was merged.
_SQUASHED_REVERT = re.compile(r"^\s*[-*]\s+Revert\b", re.M)
_MERGE_TITLE = re.compile(r"^Merge (pull request #\d+ from \S+|branch '[^']+'( of \S+)?( into \S+)?)$")

CONVENTIONAL_TYPES: dict[str, ChangeType | None] = {
    "feat": ChangeType.FEATURE,
    "feature": ChangeType.FEATURE,
    "fix": ChangeType.BUGFIX,
    "bugfix": ChangeType.BUGFIX,
    "hotfix": ChangeType.BUGFIX,
    "perf": ChangeType.PERFORMANCE,
    "refactor": ChangeType.REFACTOR,
    "style": ChangeType.REFACTOR,
    "cleanup": ChangeType.REFACTOR,
    "docs": ChangeType.DOCS,
    "doc": ChangeType.DOCS,
    "test": ChangeType.TESTS,
    "tests": ChangeType.TESTS,
    "ci": ChangeType.CI_BUILD,
    "build": ChangeType.CI_BUILD,
    "revert": ChangeType.REVERT,
    "deps": ChangeType.DEPENDENCIES,
    "dep": ChangeType.DEPENDENCIES,
    "security": ChangeType.SECURITY,
    "sec": ChangeType.SECURITY,
    "config": ChangeType.CONFIG,
    "deprecate": ChangeType.REMOVAL,
    "deprecation": ChangeType.REMOVAL,
    "remove": ChangeType.REMOVAL,
    # Recognised (and stripped) but say nothing about the type: the files decide.
    "chore": None,
    "misc": None,
    "release": None,
    "wip": None,
    "init": None,
    # NumPy-style labels (ENH, BUG, TST, MAINT …), written in capitals, with or without a colon.
    "enh": ChangeType.FEATURE,
    "bug": ChangeType.BUGFIX,
    "tst": ChangeType.TESTS,
    "bld": ChangeType.CI_BUILD,
    "sty": ChangeType.REFACTOR,
    "rev": ChangeType.REVERT,
    "mnt": None,
    "maint": None,
    "rel": None,
}
_DEP_SCOPES = frozenset({"deps", "dep", "deps-dev", "dependencies", "dependency"})

# Bracket tags, normalised (lower case, no spaces/dots/hyphens/underscores). Area tags such as
# [Model], [Kernel], [Frontend], [Core], [ROCm] are kept for the reader but carry no type.
TAG_TYPES: dict[str, ChangeType] = {
    **dict.fromkeys(["bugfix", "bug", "fix", "hotfix", "bugfixes", "fixes"], ChangeType.BUGFIX),
    **dict.fromkeys(["ci", "build", "cicd", "infra"], ChangeType.CI_BUILD),
    **dict.fromkeys(["docs", "doc", "documentation"], ChangeType.DOCS),
    **dict.fromkeys(["perf", "performance", "optimization", "optimisation", "speedup"], ChangeType.PERFORMANCE),
    **dict.fromkeys(["refactor", "refactoring", "cleanup", "clean", "style", "lint"], ChangeType.REFACTOR),
    **dict.fromkeys(["feature", "feat", "newmodel", "newfeature", "enhancement"], ChangeType.FEATURE),
    **dict.fromkeys(["test", "tests", "testing", "ut", "unittest"], ChangeType.TESTS),
    **dict.fromkeys(["deprecation", "deprecate", "deprecated", "removal", "remove"], ChangeType.REMOVAL),
    **dict.fromkeys(["security", "cve", "vulnerability"], ChangeType.SECURITY),
    **dict.fromkeys(["deps", "dependencies", "dependency", "dep"], ChangeType.DEPENDENCIES),
    **dict.fromkeys(["revert"], ChangeType.REVERT),
    **dict.fromkeys(["config", "configuration"], ChangeType.CONFIG),
}
# When a title carries several type tags ([Bugfix][CI]), the more consequential one names it.
TYPE_PRECEDENCE = (
    ChangeType.SECURITY,
    ChangeType.REVERT,
    ChangeType.REMOVAL,
    ChangeType.BUGFIX,
    ChangeType.PERFORMANCE,
    ChangeType.FEATURE,
    ChangeType.REFACTOR,
    ChangeType.DEPENDENCIES,
    ChangeType.CONFIG,
    ChangeType.TESTS,
    ChangeType.DOCS,
    ChangeType.CI_BUILD,
)

_VERBS: dict[str, ChangeType] = {
    **dict.fromkeys(
        """add adds added adding introduce introduces introduced implement implements
        implemented support supports supported enable enables enabled enabling allow allows provide
        provides new create creates expose exposes extend extends initial detect detects report reports
        emit emits warn warns improve improves improved enhance enhances enhanced accept accepts
        record records track tracks validate validates""".split(),
        ChangeType.FEATURE,
    ),
    **dict.fromkeys(
        """fix fixes fixed fixing bugfix hotfix resolve resolves resolved correct corrects
        corrected repair repairs prevent prevents avoid avoids handle handles workaround preserve
        preserves keep keeps retain retains guard guards skip skips respect respects honor honour
        honors align aligns restore restores ensure ensures""".split(),
        ChangeType.BUGFIX,
    ),
    **dict.fromkeys(
        """remove removes removed removing delete deletes deleted drop drops dropped
        deprecate deprecates deprecated deprecating retire retires""".split(),
        ChangeType.REMOVAL,
    ),
    **dict.fromkeys(
        """refactor refactors refactored restructure reorganize reorganise rename renames
        renamed move moves moved cleanup clean simplify simplifies extract split consolidate unify
        use uses replace replaces migrate rewrite decouple dedupe deduplicate tidy""".split(),
        ChangeType.REFACTOR,
    ),
    **dict.fromkeys(
        """optimize optimise optimizes optimises optimized optimised speed speedup
        accelerate accelerates memoize memoise memoizes memoises""".split(),
        ChangeType.PERFORMANCE,
    ),
    **dict.fromkeys("bump bumps upgrade upgrades downgrade pin pins unpin".split(), ChangeType.DEPENDENCIES),
    **dict.fromkeys("document documents".split(), ChangeType.DOCS),
}
# "Remove unused X" / "Remove usage of deprecated Y" clean up; they do not take a feature away.
_CLEANUP_OBJECT = re.compile(
    r"\b(unused|redundant|dead|duplicated?|obsolete|stale|leftover|usages? of|"
    r"unnecessary|useless)\b",
    re.I,
)
# A subject that says it restructures or cleans up, whatever its label: "Refactor …", "Remove
# unnecessary casts …", "Clean up …".
_RESTRUCTURES = re.compile(
    r"^(refactor\w*|restructure\w*|reorgani[sz]e\w*|clean ?up\w*"
    r"|(remove|drop|delete|avoid)s? (\w+ )?(unused|redundant|dead|unnecessary|useless|superfluous|needless)\b)",
    re.I,
)
_PERF_WORDS = re.compile(
    r"\b(speed ?up|faster|performance|latency|throughput|reduce (memory|overhead)"
    r"|memory usage|optimi[sz]\w*)\b",
    re.I,
)
_DEP_WORDS = re.compile(r"\b(version constraints?|dependenc(y|ies)|requirements?)\b", re.I)


@dataclass(frozen=True)
class TitleInfo:
    subject: str  # the title without tags, prefix and PR number
    change_type: ChangeType | None  # from the title's words alone
    strong: bool  # the type came from a prefix, a tag or "Revert" (the author's own label)
    tags: tuple[str, ...] = ()  # bracket tags as written, e.g. ("Quantization", "Deprecation")
    scope: str = ""
    breaking: bool = False
    cosmetic: bool = False
    security: bool = False  # claims a security fix (CVE, XSS, a [Security] tag, "security:")
    security_mention: bool = False  # says "security" without claiming a fix
    cve: str = ""
    default_change: bool = False
    reverted_title: str = ""
    bump: tuple[str, str, str] | None = None  # (name, old, new) from "Bump x from a to b"
    rejects: str = ""  # the title's "reject/require/disallow …" word: input refused from now on
    guard: str = ""  # a trust-boundary word (md5, reserved, traversal …) in the title or body
    guard_in_title: bool = False
    crash: bool = False  # the title or body speaks of a crash of the program
    pathology: bool = False  # exponential blow-ups, hangs
    preserving: bool = False  # the body says the behaviour does not change
    release: bool = False  # "Bump 0.16.4", "Prepare release v2.14.0b1"
    hardening: bool = False  # "Harden …", "Isolate … from credentials"
    runtime_support: str = ""  # "Python 3.15" in "Add support for Python 3.15"
    squashed_revert: bool = False  # "This reverts commit …" belongs to a commit a squash merge lists
    ci_declared: bool = False  # the author labels it CI work: a `ci:` prefix or a [CI] tag
    wrong_output: str = ""  # the message says the output was corrupted or wrong ("corrupted attention output")
    interface_change: str = ""  # the message says an interface changes under its callers ("the two inputs")
    clearer_error: bool = False  # the message says an error already raised becomes clearer ("raise a proper error")


def norm_tag(tag: str) -> str:
    return re.sub(r"[\s._-]+", "", tag.lower())


def _split_tag(tag: str) -> list[str]:
    """'[CI/Build]' → ['CI', 'Build']; '[Bugfix, Perf]' → two tags."""
    return [t.strip() for t in re.split(r"[/,|+&]", tag) if t.strip()]


def _first_type(types: Iterable[ChangeType]) -> ChangeType | None:
    found = set(types)
    return next((t for t in TYPE_PRECEDENCE if t in found), None)


def _verb_type(subject: str) -> ChangeType | None:
    words = re.findall(r"[a-z']+", subject.lower())
    if not words:
        return None
    first = words[0]
    if _PERF_WORDS.search(subject) and _VERBS.get(first) not in (ChangeType.BUGFIX, ChangeType.REMOVAL):
        return ChangeType.PERFORMANCE  # "Improve performance of …", "Introduce micro-optimizations"
    if first in ("update", "updates", "relax", "relaxes", "loosen", "tighten") and _DEP_WORDS.search(subject):
        return ChangeType.DEPENDENCIES
    if first in ("disable", "disables", "skip", "skips") and re.search(r"\b(tests?|ut|unit tests?)\b", subject, re.I):
        return ChangeType.TESTS
    if first in ("raise", "raises") and not clearer_error(subject):
        return ChangeType.FEATURE  # "Raise when X cannot be computed": a new error; a clearer one is no feature
    if first in _VERBS:
        if _VERBS[first] is ChangeType.REMOVAL and _CLEANUP_OBJECT.search(subject):
            return ChangeType.REFACTOR
        return _VERBS[first]
    if _PERF_WORDS.search(subject):
        return ChangeType.PERFORMANCE
    return None


def _clean_title(title: str, body: str) -> str:
    """The title without PR numbers; for a merge commit, the merged PR's title from the body."""
    text = title.strip()
    if _MERGE_TITLE.match(text) and body.strip():
        text = body.strip().splitlines()[0].strip()
    while _PR_SUFFIX.search(text):
        text = _PR_SUFFIX.sub("", text)
    return re.sub(r"\s*\(#\d+\)", "", text)  # "(#2)" left inside, as in "support (#2) (#33058)"


def _without_code(body: str) -> str:
    """The body without its code blocks and HTML comments: what the author says, in full (a
    failure is often told under a later heading than the summary)."""
    return re.sub(r"```.*?```|<!--.*?-->", " ", body, flags=re.S)


@dataclass(frozen=True)
class _Prefix:
    subject: str
    change_type: ChangeType | None = None
    conventional: str = ""  # the conventional type as written (lower case), "" when none
    scope: str = ""
    bang: bool = False
    reverted: str = ""


def _read_prefix(subject: str) -> _Prefix:
    """'Revert "…"', a conventional 'type(scope)!:' prefix, or a Go-style 'area:' prefix."""
    conv = _CONVENTIONAL.match(subject) or _CAPITAL_LABEL.match(subject)
    revert = _REVERT_TITLE.match(subject)
    if revert and not conv:
        inner = revert.group("inner").strip()
        return _Prefix(inner or subject, ChangeType.REVERT, reverted=inner)
    if conv and conv.group("type").lower() in CONVENTIONAL_TYPES:
        kind = conv.group("type").lower()
        scope = (conv.groupdict().get("scope") or "").strip()
        rest = conv.group("rest").strip()
        ctype = CONVENTIONAL_TYPES[kind]
        if scope.lower() in _DEP_SCOPES and kind in ("chore", "build", "fix", "ci", "deps"):
            ctype = ChangeType.DEPENDENCIES  # Dependabot's "build(deps):", Renovate's "fix(deps):"
        reverted = rest.strip("\"“”'") if ctype is ChangeType.REVERT else ""
        return _Prefix(rest, ctype, kind, scope, bool(conv.groupdict().get("bang")), reverted)
    if _AREA_PREFIX.match(subject):
        return _Prefix(_AREA_PREFIX.sub("", subject, count=1))
    return _Prefix(subject)


@lru_cache(maxsize=512)
def parse_title(title: str, body: str = "") -> TitleInfo:
    """Read everything the title (and the body's markers) say about the change. Cached: a commit
    is read for its hint, its analysis and each language, and the reading never changes."""
    text = _clean_title(title, body)
    tags = tuple(t for m in _BRACKET.finditer(text) for t in _split_tag(m.group(1).strip()))
    tag_keys = [norm_tag(t) for t in tags]
    prefix = _read_prefix(_BRACKET.sub(" ", text).strip(" :-–—"))

    tag_type = _first_type(TAG_TYPES[k] for k in tag_keys if k in TAG_TYPES)
    if prefix.change_type is ChangeType.REVERT:
        change_type: ChangeType | None = ChangeType.REVERT
    else:
        change_type = _first_type(t for t in (prefix.change_type, tag_type) if t is not None)
    strong = change_type is not None  # the author labelled it: a tag, a prefix or "Revert"
    if change_type is None:
        change_type = _verb_type(prefix.subject)
    elif change_type in (ChangeType.FEATURE, ChangeType.BUGFIX) and _RESTRUCTURES.match(prefix.subject):
        # A broad label ("ENH", "FIX") over a subject whose verb names the narrower kind: "ENH
        # Refactor variant resolution", "FIX Remove unnecessary casts" restructure, they add or fix nothing.
        change_type = ChangeType.REFACTOR
    bump = words.read_bump(prefix.subject)
    if bump and change_type in (None, ChangeType.REFACTOR, ChangeType.FEATURE):
        change_type = ChangeType.DEPENDENCIES

    is_release = words.is_release(prefix.subject, text)
    if is_release and prefix.change_type is not ChangeType.REVERT:
        bump = None  # "Bump 0.16.4" is this project's version, not a dependency
        if change_type in (None, ChangeType.DEPENDENCIES, ChangeType.FEATURE, ChangeType.REFACTOR):
            change_type = ChangeType.OTHER
    body_text = first_paragraphs(body)
    guard, guard_in_title = words.guard(text, body_text)
    # A declared fix, feature or speed-up changes behaviour by the author's own label: "no behaviour
    # change" in its body speaks of what it leaves alone, not of the change.
    declared = strong and change_type in (ChangeType.FEATURE, ChangeType.BUGFIX, ChangeType.PERFORMANCE)
    preserving = not declared and (words.preserving(body) or words.preserving(text))
    if (
        preserving
        and change_type in (None, ChangeType.FEATURE, ChangeType.OTHER, ChangeType.PERFORMANCE)
        and not strong
    ):
        change_type = ChangeType.REFACTOR
    cve = words.cve(title, body)
    claims_security = words.claims_security_fix(text) or bool(cve) or ChangeType.SECURITY in (change_type, tag_type)
    return TitleInfo(
        subject=prefix.subject,
        change_type=change_type,
        strong=strong,
        tags=tags,
        scope=prefix.scope,
        breaking=words.declares_breaking(text, body, prefix.bang, tags),
        cosmetic=(
            words.cosmetic(text)
            or prefix.conventional == "style"
            or any(k in ("typo", "lint", "style", "format") for k in tag_keys)
        ),
        security=claims_security,
        security_mention=words.mentions_security(text) and not claims_security,
        cve=cve,
        default_change=words.default_change(text),
        reverted_title=prefix.reverted,
        bump=bump,
        rejects=words.refused_input(prefix.subject),
        guard=guard,
        guard_in_title=guard_in_title,
        crash=words.crash(f"{text}\n{body_text}"),
        pathology=words.pathology(f"{text}\n{body_text}"),
        preserving=preserving,
        release=is_release,
        hardening=words.hardening(text),
        runtime_support=words.runtime_support(prefix.subject),
        squashed_revert=change_type is not ChangeType.REVERT and bool(_SQUASHED_REVERT.search(body)),
        ci_declared=prefix.conventional == "ci" or any(k in ("ci", "cicd") for k in tag_keys),
        wrong_output=words.wrong_output(f"{text}\n{_without_code(body)}"),
        interface_change=words.interface_change(f"{text}\n{body_text}"),
        clearer_error=words.clearer_error(f"{text}\n{body_text}"),
    )

"""Dependencies: version bumps named in the title or read from manifests and lockfiles, what
ships versus development-only groups, and the update line a dependency bot's commit is summed up by."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....core.models import ChangeType, Commit, FileChange, Importance
from ....i18n import phrase
from ..context import Context, Fact, Insight, Risk
from ..lang import Names
from ..patch import change_blocks, diff_lines, exact_pins, lockfile_updates, manifest_blocks, requirements
from ..paths import DEV_MANIFEST, FileKind, extension, is_experimental, is_root_manifest, shipped_manifest

if TYPE_CHECKING:
    from ...repo_config import RepoProfile
    from ..stats import FileStats
    from ..title import TitleInfo

_DEV_GROUP = re.compile(
    r"(dev|test|lint|doc|typing|bench|mypy|format|tool\.|dependency-groups|constraint"
    r"|\bci\b|example|fuzz|release-tooling)",
    re.I,
)
# Where a TOML or JSON manifest lists dependencies ([dependencies], "devDependencies",
# `requires = [`, [project.optional-dependencies]); its other tables and arrays (package data,
# tool settings) hold paths and options, not requirements.
_DEP_GROUP_NAME = re.compile(r"depend|require|extras", re.I)
# The build files that declare a package's dependencies (a Dockerfile or a CMakeLists.txt does not).
_PACKAGE_MANIFESTS = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "build.gradle", "build.gradle.kts", "pom.xml", "meson.build"}
)
_RENOVATE_ROW = re.compile(
    r"^\|\s*\[?(?P<name>[@\w./-]+)\]?(?:\([^)]*\))?\s*\|.*?`?v?(?P<old>\d[\w.+-]*)`?\s*"
    r"(?:->|→)\s*`?v?(?P<new>\d[\w.+-]*)`?",
    re.M,
)
_DEPENDABOT_LINE = re.compile(
    r"\bBumps? \[?(?P<name>[@\w./-]+)\]?(?:\([^)]*\))? from (?P<old>\d[\w.+-]*) to "
    r"(?P<new>\d[\w.+-]*?)\.?(?=\s|$)",
    re.I,
)
_ACTION_PIN = re.compile(r"uses:\s*(?P<name>[\w.-]+/[\w./-]+)@\S+\s*#\s*v?(?P<v>\d[\w.]*)")
_TOOL_VERSION = re.compile(
    r"""^\s*(?:rev|version|node-version|python-version):\s*["']?v?(?P<v>\d[\w.]*)["']?(?:\s*#.*)?$"""
)
_FROZEN_REV = re.compile(r"#\s*frozen:\s*v?(?P<v>\d[\w.]*)")


# --- reading the message --------------------------------------------------------------------------


def _version_major(version: str) -> tuple[int, int]:
    nums = [int(n) for n in re.findall(r"\d+", version)[:2]] + [0, 0]
    return nums[0], nums[1]


def is_major_bump(old: str, new: str) -> bool:
    """A semver-major step: 1.x → 2.x, or 0.3 → 0.4 (0.x minors break by convention)."""
    if not old:
        return True  # Renovate only writes "to v3" (no minor) for a major update
    (o_major, o_minor), (n_major, n_minor) = _version_major(old), _version_major(new)
    return n_major != o_major or (o_major == 0 and n_minor != o_minor)


# --- reading the files ---------------------------------------------------------------------------


def _declares_dependencies(f: FileChange, kind: FileKind) -> bool:
    """A manifest that declares dependencies: a dependency file, or a build file of a package."""
    return kind is FileKind.DEPENDENCY or (
        kind is FileKind.BUILD and f.path.rsplit("/", 1)[-1].lower() in _PACKAGE_MANIFESTS
    )


# A quoted requirement with a version: '"vllm>=0.17.0,<=0.25.1",' in an optional extra's array.
_QUOTED_REQUIREMENT = re.compile(r"""^\s*["'][A-Za-z0-9][\w.-]*(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|<|>)\s*\d""")


def _not_a_dependency_list(f: FileChange, group: str, lines: list[str]) -> bool:
    """A table or array of a TOML or JSON manifest that lists no dependencies (package data, tool
    settings): its lines are paths and options ('"src/a2a/*.cu"' is no requirement). An array
    whose changed lines are all versioned requirements lists dependencies whatever its name (an
    optional extra, `vllm = [`)."""
    if not (bool(group) and extension(f.path) in ("toml", "json") and not _DEP_GROUP_NAME.search(group)):
        return False
    changed = [ln for ln in lines if ln.strip()]
    return not (changed and all(_QUOTED_REQUIREMENT.match(ln) for ln in changed))


def _changed_names(stats: FileStats, profile: RepoProfile) -> tuple[list[str], bool]:
    """(dependency names changed in what ships, whether any changed in a dev/test group)."""
    shipped: list[str] = []
    dev_only = False
    for f, kind in stats.files:
        if not _declares_dependencies(f, kind):
            continue
        ships = shipped_manifest(f.path, profile)
        names: list[str] = []
        for group, minus, plus in manifest_blocks(f.patch):
            dev = bool(_DEV_GROUP.search(group)) or not ships
            if not dev and _not_a_dependency_list(f, group, minus + plus):
                continue
            local = [ln for ln in plus + minus if re.search(r"\bpath\s*=", ln)]
            plus_ext = [ln for ln in plus if ln not in local]
            minus_ext = [ln for ln in minus if ln not in local]
            changed = (set(requirements(plus_ext)) | set(requirements(minus_ext))) if plus_ext != minus_ext else set()
            if changed:
                if dev:
                    dev_only = True
                else:
                    names.extend(sorted(changed))
        shipped += [n for n in names if n not in shipped]
    return shipped, dev_only


# One requirement as written, anywhere on a line (a setup.py tuple holds two: the release build's
# and the development build's): its name and its version clauses.
_SPECIFIED = re.compile(
    r"""(?<![\w.-])(?P<name>[A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*"""
    r"""(?P<spec>(?:(?:===?|>=|<=|~=|!=|<|>)\s*v?\d[\w.*+-]*\s*,?\s*)+)"""
)
_CLAUSE = re.compile(r"(===?|>=|<=|~=|!=|<|>)\s*v?(\d[\w.*+-]*)")

Bounds = tuple[tuple[int, ...] | None, tuple[int, ...] | None]  # (lowest allowed, highest allowed)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


def _bounds(lines: list[str]) -> dict[str, list[Bounds]]:
    """name → (floor, ceiling) of each requirement the lines write with versions (`>=5.9,<=5.14.1`:
    ((5, 9), (5, 14, 1)); `==0.18.0`: both (0, 18, 0); `<2.0`: a ceiling just below 2.0, kept as
    (2, 0) — the comparisons below treat it as excluded)."""
    found: dict[str, list[Bounds]] = {}
    for line in lines:
        if "=" not in line and "<" not in line and ">" not in line:
            continue
        for m in _SPECIFIED.finditer(line):
            floor = ceiling = None
            for op, ver in _CLAUSE.findall(m.group("spec")):
                v = _version(ver)
                if op in ("==", "===", ">=", ">", "~="):
                    floor = v if floor is None else max(floor, v)
                if op in ("==", "===", "<=", "<"):
                    ceiling = v if ceiling is None else min(ceiling, v)
            found.setdefault(m.group("name").lower(), []).append((floor, ceiling))
    return found


def forced_upgrades(old: dict[str, list[Bounds]], new: dict[str, list[Bounds]]) -> list[tuple[str, str, str]]:
    """(name, the old floor (or, without one, the old ceiling), the new floor) of each
    shipped requirement whose new floor leaves every install of the previous requirement behind:
    above the old ceiling in a later minor or major release (`==0.17.1` → `==0.18.0`,
    `<=5.14.1` → `==5.15.0`), or a floor across a major version (`>=0.34` → `>=1.23`). A floor
    raised within a major line (`>=4.5` → `==4.7`, `>=0.7,<1` → `>=0.8,<1`) leaves the newer of
    the old installs working: that is the medium of a changed requirement."""
    out = []
    for name in sorted(old.keys() & new.keys()):
        floors = [f for f, _ in new[name] if f is not None]
        if not floors:
            continue
        floor = min(floors)  # the loosest new requirement (a development build's) decides
        old_floors = [f for f, _ in old[name] if f is not None]
        above = [c for f, c in old[name] if c is not None and floor >= c and _leaves_behind(f, c, floor)]
        was = _dotted(max(old_floors)) if old_floors else ""
        if above or (old_floors and floor[0] > max(old_floors)[0]):
            out.append((name, was or _dotted(max(above)), _dotted(floor)))
    return out


def _leaves_behind(old_floor: tuple[int, ...] | None, ceiling: tuple[int, ...], floor: tuple[int, ...]) -> bool:
    """The new floor is past the old ceiling by a release that breaks by convention (a new major,
    or a new minor of a 0.x: `==0.17.1` → `==0.18.0`), or past a range of several minors the old
    requirement supported (`>=5.9,<=5.14.1` → `==5.15.0`). A pin moved to the next minor of a 1.x
    or later (`==2.47.0` → `==2.48.0`: a companion package released in lockstep) is not."""
    if floor[:2] == ceiling[:2]:
        return False
    if is_major_bump(_dotted(ceiling), _dotted(floor)):
        return True
    return old_floor is not None and old_floor[:2] != ceiling[:2]


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _requirement_versions(
    stats: FileStats, profile: RepoProfile
) -> tuple[dict[str, str], dict[str, str], dict[str, str], list[tuple[str, str, str]]]:
    """(old, new) versions of every shipped requirement the manifests' patches remove and add ('' for
    one without a version, in a requirements file), the requirements newly pinned to one
    version (`tilelang` → `tilelang==0.1.11`, or a new one added pinned), and the requirements
    whose new floor every previous install falls below (`forced_upgrades`)."""
    old_reqs: dict[str, str] = {}
    new_reqs: dict[str, str] = {}
    pins: dict[str, str] = {}
    old_bounds: dict[str, list[Bounds]] = {}
    new_bounds: dict[str, list[Bounds]] = {}
    for f, kind in stats.files:
        if not _declares_dependencies(f, kind) or profile.is_internal(f.path) or not is_root_manifest(f.path, profile):
            continue
        bare = kind is FileKind.DEPENDENCY and extension(f.path) in ("txt", "in")
        for group, minus, plus in manifest_blocks(f.patch):
            if _DEV_GROUP.search(group) or DEV_MANIFEST.search(f.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]):
                continue
            if _not_a_dependency_list(f, group, minus + plus):
                continue
            for k, v in requirements(minus, bare).items():
                old_reqs.setdefault(k, v)
            for k, v in requirements(plus, bare).items():
                new_reqs.setdefault(k, v)
            was = exact_pins(minus)
            pins.update((k, v) for k, v in exact_pins(plus).items() if k not in was)
            if minus and plus:
                for side, lines in ((old_bounds, minus), (new_bounds, plus)):
                    for name, bounds in _bounds(lines).items():
                        side.setdefault(name, []).extend(bounds)
    return old_reqs, new_reqs, pins, forced_upgrades(old_bounds, new_bounds)


def read(stats: FileStats, title: TitleInfo, profile: RepoProfile) -> dict:
    """The dependency fields of DiffFacts: major bumps, added and removed dependencies, shipped
    dependency changes and whether every change is development-only."""
    shipped, dev_deps = _changed_names(stats, profile)
    old_reqs, new_reqs, pins, forced = _requirement_versions(stats, profile)
    bumps = [
        (n, old_reqs[n], new_reqs[n])
        for n in sorted(old_reqs.keys() & new_reqs.keys())
        if old_reqs[n] and new_reqs[n] and is_major_bump(old_reqs[n], new_reqs[n])
    ]
    if title.bump and is_major_bump(title.bump[1], title.bump[2]) and not (dev_deps and not shipped):
        if not any(b[0].lower() == title.bump[0].lower() for b in bumps):
            bumps.insert(0, title.bump)
    return dict(
        major_bumps=tuple(bumps),
        added_deps=tuple(sorted(new_reqs.keys() - old_reqs.keys())),
        removed_deps=tuple(sorted(old_reqs.keys() - new_reqs.keys())),
        shipped_dep_changes=tuple(shipped),
        dep_changes=tuple(
            (n, old_reqs[n], new_reqs[n])
            for n in sorted(old_reqs.keys() & new_reqs.keys())
            if old_reqs[n] != new_reqs[n] and new_reqs[n] and n not in pins  # a pin is said as one
        ),
        pins=tuple(sorted(pins.items())),
        forced_upgrades=tuple(forced),
        dev_only_deps=dev_deps and not shipped and not bumps,
    )


def dependency_updates(commit: Commit, stats: FileStats, title: TitleInfo) -> list[tuple[str, str, str]]:
    """What a dependency update changes, from the bot's body, the title or the lockfile diff."""
    seen: dict[str, tuple[str, str, str]] = {}
    for m in list(_RENOVATE_ROW.finditer(commit.body)) + list(_DEPENDABOT_LINE.finditer(commit.body)):
        seen.setdefault(m.group("name").lower(), (m.group("name"), m.group("old"), m.group("new")))
    if title.bump and title.bump[1]:
        seen.setdefault(title.bump[0].lower(), title.bump)
    for f in stats.of(FileKind.LOCKFILE):
        for name, old, new in lockfile_updates(f):
            seen.setdefault(name.lower(), (name, old, new))
    if not seen:
        for f in stats.of(FileKind.CI, FileKind.CONFIG, FileKind.DEPENDENCY, FileKind.BUILD):
            for minus, plus in change_blocks(f.patch):
                for a, b in zip(minus, plus):
                    ma, mb = _ACTION_PIN.search(a), _ACTION_PIN.search(b)
                    if ma and mb and ma.group("name") == mb.group("name") and ma.group("v") != mb.group("v"):
                        seen.setdefault(ma.group("name").lower(), (ma.group("name"), ma.group("v"), mb.group("v")))
                        continue
                    ta, tb = (
                        _FROZEN_REV.search(a) or _TOOL_VERSION.match(a),
                        _FROZEN_REV.search(b) or _TOOL_VERSION.match(b),
                    )
                    if ta and tb and ta.group("v") != tb.group("v") and title.subject:
                        key = title.bump[0] if title.bump else _dep_subject(title.subject)
                        if key:
                            seen.setdefault(key.lower(), (key, ta.group("v"), tb.group("v")))
    return list(seen.values())


def _dep_subject(subject: str) -> str:
    m = re.search(r"\b(?:update|bump|upgrade)\s+(?:dependency\s+|module\s+)?(?P<name>[@\w./-]+)", subject, re.I)
    return m.group("name") if m else ""


# --- install extras ------------------------------------------------------------------------------

# The Python manifests that declare a package's extras (`pip install pkg[extra]`), and where they
# do: setup.py's `EXTRAS_REQUIRE = {` / `extras_require=`, `[project.optional-dependencies]`,
# setup.cfg's `[options.extras_require]`.
_EXTRAS_MANIFESTS = frozenset({"setup.py", "setup.cfg", "pyproject.toml"})
_EXTRAS_MARK = re.compile(r"extras_require|extras|optional-dependencies", re.I)
_SETUP_EXTRA = re.compile(r"""^\s*["']([A-Za-z0-9][\w.-]*)["']\s*:\s*[\["']""")  # "neuronx": [...]
_TOML_EXTRA = re.compile(r"""^\s*([A-Za-z0-9][\w.-]*)\s*=\s*[\["']""")  # neuronx = [...]
_TOML_TABLE = re.compile(r"^\s*\[[^\]]+\]\s*$")
_SETUP_STATEMENT = re.compile(r"^(?:\w[^=]*=|\w+\()")  # an unindented assignment or call: a new scope
# Extras of the project's own work (dev, test, docs, lint, "quality"), and `all` (a union of the rest).
_DEV_EXTRA = re.compile(r"(dev|test|lint|doc|typing|bench|mypy|format|quality|style|example|fuzz|^ci$|^all$)", re.I)


def extras(c: Context) -> tuple[list[str], bool]:
    """(the install extras a shipped Python manifest drops, whether any extra's contents change).
    An extra is what `pip install pkg[extra]` pulls: dropped, that install stops pulling it (or
    fails); changed, users of the extra get other packages. Extras of the project's own work
    (dev, test, docs) do not count."""
    removed: list[str] = []
    changed = False
    for f, _ in c.stats.files:
        name = f.path.rsplit("/", 1)[-1]
        if name not in _EXTRAS_MANIFESTS or not f.patch or not _EXTRAS_MARK.search(f.patch):
            continue
        if not shipped_manifest(f.path, c.profile):
            continue
        setup = name == "setup.py"
        entry, scope = (_SETUP_EXTRA, _SETUP_STATEMENT) if setup else (_TOML_EXTRA, _TOML_TABLE)
        minus: set[str] = set()
        plus: set[str] = set()
        inside, extra = False, ""
        for sign, text in diff_lines(f.patch):
            if sign == "@" or scope.match(text):
                inside = bool(_EXTRAS_MARK.search(text))  # the hunk header, or a statement or table opening
                extra = ""
                continue
            m = entry.match(text) if inside else None
            if m:
                extra = m.group(1)  # the extra the lines below belong to (an entry seen as context too)
            if sign not in "+-" or not inside or _DEV_EXTRA.search(extra):
                continue
            stripped = text.strip()
            if stripped and not stripped.startswith("#"):
                changed = True
            if m:
                (minus if sign == "-" else plus).add(extra)
        removed += sorted(minus - plus)
    return removed, changed or bool(removed)


# --- minimums checked at run time ------------------------------------------------------------------

# A requirement the code checks when it runs (`RequirementCache("jsonargparse[signatures]>=4.39")`)
# or a minimum it compares against (`TORCH_MINIMUM_VERSION = version.parse("2.1.0")`).
_CHECKED_REQUIREMENT = re.compile(r"""["']([A-Za-z][\w.-]*)(?:\[[^\]]*\])?\s*>=\s*v?(\d+(?:\.\d+)*)[^"'\n]*["']""")
_MINIMUM_CONSTANT = re.compile(
    r"""\b([A-Z][A-Z0-9_]*MIN\w*VERSION\w*|[A-Z][A-Z0-9_]*VERSION\w*MIN\w*)\s*=[^\n]*?["']v?(\d+(?:\.\d+)*)"""
)

# A version floor closing a quoted requirement (`>=4.39"`): a search that starts at a literal `>=`.
_QUOTED_FLOOR = re.compile(r""">=\s*v?\d[\w.]*["']""")


def raised_runtime_minimums(c: Context) -> list[tuple[str, str, str]]:
    """(what, old, new) for each minimum version the shipped code checks at run time that a
    changed line raises: installs that met the old minimum now fail the check (the manifest may
    not say so)."""
    out: list[tuple[str, str, str]] = []
    for f in c.stats.source:
        patch = f.patch or ""
        # A quoted floor or a MIN…VERSION name somewhere in the patch (a search and substring tests,
        # in C) spares splitting every patch that compares with `>=`.
        if not (_QUOTED_FLOOR.search(patch) or ("MIN" in patch and "VERSION" in patch)) or c.profile.is_internal(
            f.path
        ):
            continue
        for minus, plus in change_blocks(f.patch):
            old: dict[str, str] = {}
            new: dict[str, str] = {}
            for side, lines in ((old, minus), (new, plus)):
                for ln in lines:
                    for m in (*_CHECKED_REQUIREMENT.finditer(ln), *_MINIMUM_CONSTANT.finditer(ln)):
                        side[m.group(1)] = m.group(2)
            out += [(k, old[k], new[k]) for k in sorted(old.keys() & new.keys()) if _version(new[k]) > _version(old[k])]
    return out


# A new assertion that an installed version meets a minimum: `assert is_causal_conv1d_min_version(…)`,
# `assert torch_version >= …`. An `if … : raise` is left out: it often guards an optional path.
_ASSERTED_MINIMUM = re.compile(
    r"^\+\s*assert\s+(?:not\s+)?([\w.]*min_version\w*)\s*\(|^\+\s*assert\s+([\w.]*version\w*)\s*>", re.M
)


def asserted_minimums(c: Context) -> list[str]:
    """What shipped, non-experimental source newly asserts meets a minimum version at run time:
    installs below it, which worked before, now stop with an AssertionError (round 8)."""
    if c.ctype in (ChangeType.TESTS, ChangeType.DOCS):
        return []
    out: list[str] = []
    for f in c.stats.source:
        patch = f.patch or ""
        if not f.additions or extension(f.path) != "py":
            continue  # Python's `assert` statement
        if ("min_version" not in patch and "version >" not in patch) or "assert" not in patch:
            continue  # substring tests first: a regex over every patch would cost more than the rest
        if c.profile.is_internal(f.path):
            continue
        found = [m.group(1) or m.group(2) for m in _ASSERTED_MINIMUM.finditer(patch)]
        if found and not is_experimental(f.path, c.profile):
            out += found
    return list(dict.fromkeys(out))


# --- conclusions ---------------------------------------------------------------------------------


def dev_only(c: Context) -> Fact | None:
    """A ceiling: only development, test or docs dependencies change."""
    if c.diff.dev_only_deps and not c.stats.source and not c.diff.release_edits:
        return Fact(Importance.LOW, phrase("offline.dependencies.only_dev_deps"))
    return None


def pinned(c: Context) -> Names:
    return Names([f"{name}=={version}" for name, version in c.diff.pins], 2)


_SUPPORT_WORDS = re.compile(r"\b(support\w*|drop\w*|requir\w*|minimum|compatib\w*)\b", re.I)


def supported_dependency(c: Context) -> str:
    """The shipped dependency whose supported versions the title says change ("Drop vLLM 0.16
    support", "Add support for vLLM 0.25") and the diff bears out: its requirement changes in a
    manifest of what ships. '' when none."""
    if not _SUPPORT_WORDS.search(c.title.subject) or c.ctype in (ChangeType.TESTS, ChangeType.DOCS):
        return ""
    words = {w.lower() for w in re.findall(r"[\w.-]+", c.title.subject)}
    return next((name for name in c.diff.shipped_dep_changes if name.lower() in words), "")


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    dropped, extras_changed = extras(c)
    if dropped:
        # `pip install pkg[extra]` stops pulling what it pulled (pip warns and installs without it).
        facts.append(
            Fact(Importance.HIGH, phrase("offline.dependencies.drops_extras", names=Names(dropped, 3)), order=42)
        )
    elif extras_changed:
        facts.append(Fact(Importance.MEDIUM, phrase("offline.dependencies.changes_extras"), order=43))
    for name, old, new in raised_runtime_minimums(c)[:1]:
        facts.append(
            Fact(
                Importance.HIGH,
                phrase("offline.dependencies.raises_checked_minimum", name=name, old=old, new=new),
                order=42,
            )
        )
    asserted = [] if raised_runtime_minimums(c) else asserted_minimums(c)
    if asserted:
        facts.append(
            Fact(Importance.HIGH, phrase("offline.dependencies.asserts_minimum", names=Names(asserted, 2)), order=42)
        )
    supported = supported_dependency(c)
    if supported and not c.diff.major_bumps and not c.diff.pins:
        facts.append(
            Fact(Importance.MEDIUM, phrase("offline.dependencies.supported_versions", name=supported), order=43)
        )
    for name, old, new in c.diff.forced_upgrades[:1]:
        # Every install of the previous release's requirement is below the new floor: users must
        # upgrade this dependency (and what else needs it) to take the release.
        facts.append(
            Fact(Importance.HIGH, phrase("offline.dependencies.forces_upgrade", name=name, old=old, new=new), order=42)
        )
    for name, old, new in c.diff.major_bumps[:1]:
        span = f"{old} → {new}" if old else f"→ v{new}"
        facts.append(Fact(Importance.MEDIUM, phrase("offline.dependencies.major_bump", name=name, span=span), order=43))
    if c.diff.pins:
        # Users install it beside everything else they run: one exact version of a dependency
        # decides which versions of it (and of what needs it) they can have.
        facts.append(Fact(Importance.MEDIUM, phrase("offline.dependencies.pins", pins=pinned(c)), order=43))
    return facts


def risks(c: Context) -> list[Risk]:
    diff = c.diff
    if diff.major_bumps:
        name, old, new = diff.major_bumps[0]
        span = f"{old} → {new}" if old else f"v{new}"
        return [
            Risk(
                43,
                phrase("offline.dependencies.major_may_break", name=name, span=span),
                phrase("offline.dependencies.read_changelog_and_pin", name=name),
            )
        ]
    if diff.pins:
        return [
            Risk(
                43,
                phrase("offline.dependencies.pin_conflicts", pins=pinned(c)),
                phrase("offline.dependencies.check_pinned_versions", pins=pinned(c)),
            )
        ]
    if diff.shipped_dep_changes and c.ctype is not ChangeType.REVERT and not c.title.release:
        deps = Names(diff.shipped_dep_changes, 2)
        return [
            Risk(
                43,
                phrase("offline.dependencies.shipped_deps_change", names=deps),
                phrase("offline.dependencies.regenerate_lockfiles"),
            )
        ]
    return []


def insights(c: Context) -> list[Insight]:
    out: list[Insight] = []
    if c.diff.added_deps:
        out.append(Insight("architecture", 30, phrase("offline.dependencies.new_deps", names=Names(c.diff.added_deps))))
    if c.diff.removed_deps:
        out.append(
            Insight("architecture", 31, phrase("offline.dependencies.dropped_deps", names=Names(c.diff.removed_deps)))
        )
    return out

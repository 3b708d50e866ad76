"""Offline, rule-based commit analysis.

Used when no LLM is configured, and as the fallback when the LLM fails for one commit. Pure code,
no I/O. It improves on the reference tool's score (see notes/anchors.md) in four ways:
- the change type comes from conventional prefixes, vLLM-style bracket tags in any position,
  verbs and the files touched, into the one closed `ChangeType` list;
- size is measured on source code only: tests, docs, lockfiles, generated and vendored files
  never make a commit look important;
- the decisive facts (removed files and APIs, breaking markers, security, reverts, dependency
  majors, config defaults, CLI flags, build files) are read from titles, bodies, paths and patches;
- every level comes with `importance_reason`, one sentence naming those facts.
"""
from __future__ import annotations

import enum
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from ..models import Analysis, ChangeType, Commit, Coverage, FileChange, Importance, Insights
from .profile import RepoProfile

# Part of the analysis cache key: bump whenever a rule or a sentence changes.
HEURISTIC_VERSION = "2.0"


# =============================================================================================
# Language
# =============================================================================================

def _is_zh(lang: str) -> bool:
    return (lang or "zh").lower().startswith("zh")


def _num(n: int) -> str:
    return f"{n:,}"


def _lines(additions: int, deletions: int) -> str:
    """'+340/−25' — the minus is U+2212 so it reads as a sign, not a hyphen."""
    return f"+{_num(additions)}/−{_num(deletions)}"


def _count_en(n: int, noun: str) -> str:
    return f"{_num(n)} {noun}" if n == 1 else f"{_num(n)} {noun}s"


def _files_en(n: int) -> str:
    return _count_en(n, "file")


def _name_list(names: Sequence[str], zh: bool, limit: int = 3) -> str:
    """'a、b、c 等 5 个' / 'a, b, c and 2 more'."""
    shown = list(names[:limit])
    rest = len(names) - len(shown)
    if zh:
        text = "、".join(shown)
        return f"{text} 等 {_num(len(names))} 个" if rest > 0 else text
    text = ", ".join(shown)
    return f"{text} and {rest} more" if rest > 0 else text


def _clip(text: str, limit: int) -> str:
    """Cut at a sentence end if one is near the limit, else at a word, and say so with '…'."""
    text = text.strip()
    if len(text) <= limit:
        return text
    window = text[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)|[。！？；]", window)]
    if ends and ends[-1] >= limit * 0.4:
        return window[:ends[-1]].strip()
    space = window.rfind(" ")
    cut = window[:space] if space >= limit * 0.5 else window
    return cut.rstrip(" ,;:，、") + "…"


# =============================================================================================
# Files: what kind of file each path is
# =============================================================================================

class FileKind(str, enum.Enum):
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    CI = "ci"
    BUILD = "build"
    DEPENDENCY = "dependency"  # a manifest that declares dependencies
    LOCKFILE = "lockfile"
    GENERATED = "generated"  # generated or vendored: nobody wrote it here
    CONFIG = "config"
    TOOLING = "tooling"  # benchmarks, scripts, tools: code that does not ship
    OTHER = "other"  # images, data, binaries

    def label(self, zh: bool) -> str:
        return _KIND_LABELS[self][0 if zh else 1]


_KIND_LABELS = {
    FileKind.SOURCE: ("源码", "source"),
    FileKind.TEST: ("测试", "test"),
    FileKind.DOCS: ("文档", "docs"),
    FileKind.CI: ("CI 配置", "CI"),
    FileKind.BUILD: ("构建文件", "build"),
    FileKind.DEPENDENCY: ("依赖清单", "dependency manifest"),
    FileKind.LOCKFILE: ("锁文件", "lockfile"),
    FileKind.GENERATED: ("生成或第三方文件", "generated/vendored"),
    FileKind.CONFIG: ("配置", "config"),
    FileKind.TOOLING: ("工具脚本", "tooling"),
    FileKind.OTHER: ("其他", "other"),
}

# Kinds that change nothing a user runs: a commit made only of these is low, whatever its size.
NON_RUNTIME = frozenset({FileKind.TEST, FileKind.DOCS, FileKind.CI, FileKind.LOCKFILE,
                         FileKind.GENERATED, FileKind.OTHER})

_SOURCE_EXT = frozenset("""
py pyi pyx pxd c h cc cpp cxx hh hpp hxx inl cu cuh hip metal cl m mm swift rs go java kt kts scala
groovy js jsx mjs cjs ts tsx mts cts vue svelte rb php cs fs vb lua pl pm r jl zig dart ex exs erl
hrl hs ml mli clj cljs nim v sv vhd sql proto graphql gql thrift sh bash zsh fish ps1 bat cmd html
htm css scss sass less jinja j2 tmpl tpl mojo triton ptx asm s wgsl glsl hlsl sol elm
""".split())
_CONFIG_EXT = frozenset("yaml yml toml ini cfg conf json jsonc json5 properties env xml plist".split())
_DOC_EXT = frozenset("md markdown rst adoc asciidoc txt ipynb tex org".split())
_LOCK_NAMES = frozenset("""
package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml poetry.lock pipfile.lock uv.lock
pdm.lock cargo.lock gemfile.lock composer.lock go.sum mix.lock pubspec.lock packages.lock.json
flake.lock bun.lockb bun.lock podfile.lock gradle.lockfile conda-lock.yml
""".split())
_DEP_NAMES = frozenset("""
pipfile package.json go.mod cargo.toml gemfile composer.json environment.yml environment.yaml
pubspec.yaml mix.exs podfile packages.config directory.packages.props vcpkg.json conanfile.txt
conanfile.py
""".split())
_BUILD_NAMES = frozenset("""
cmakelists.txt makefile gnumakefile setup.py setup.cfg pyproject.toml manifest.in build.gradle
build.gradle.kts settings.gradle settings.gradle.kts pom.xml meson.build meson_options.txt build
build.bazel workspace workspace.bazel module.bazel .bazelrc justfile containerfile build.rs
cmakepresets.json configure.ac configure makefile.am sconstruct flake.nix default.nix
""".split())
_CI_NAMES = frozenset("""
.gitlab-ci.yml jenkinsfile .travis.yml azure-pipelines.yml .drone.yml appveyor.yml
cloudbuild.yaml cloudbuild.yml codecov.yml .codecov.yml .pre-commit-config.yaml tox.ini
noxfile.py .mergify.yml bitbucket-pipelines.yml
""".split())
_CI_DIRS = frozenset({".github", ".buildkite", ".circleci", ".gitlab", ".azure-pipelines", ".ci"})
_DOC_NAME_PREFIXES = ("readme", "changelog", "changes", "history", "license", "licence", "copying",
                      "notice", "authors", "contributing", "code_of_conduct", "security.md",
                      "citation", "releasing", "news")
_DOC_DIRS = frozenset({"docs", "doc", "documentation", "examples", "example", "man", "site"})
_DOC_CONFIG_NAMES = frozenset({"mkdocs.yml", "mkdocs.yaml", ".readthedocs.yml", ".readthedocs.yaml",
                               "docusaurus.config.js"})
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "testing", "testdata", "test_data",
                        "e2e", "spec", "__snapshots__", "fixtures", "unittest", "unittests", "mdtest",
                        "snapshots"})
_TOOLING_DIRS = frozenset({"benchmarks", "benchmark", "bench", "benches", "tools", "scripts", "hack",
                           "dev", "contrib", "misc", "playground", "fuzz", "website", ".devcontainer",
                           ".agents"})
# Benchmarks nested in a package (crates/x/benches/, pkg/benchmarks/) do not ship either.
_NESTED_TOOLING_DIRS = frozenset({"benches", "benchmarks", "benchmark"})
_GENERATED_DIRS = frozenset({"vendor", "vendored", "_vendor", "third_party", "third-party", "thirdparty",
                             "node_modules", "generated", "__generated__", "dist",
                             "typeshed"})  # stubs copied from python/typeshed by a sync job
_TEST_FILE = re.compile(r"(^test_.*\.py$|_test\.(py|go|rs|cc|cpp|c)$|\.(test|spec)\.[jt]sx?$|_spec\.rb$"
                        r"|^conftest\.py$)")
_CAMEL_TEST_FILE = re.compile(r"[a-z0-9]Tests?\.(java|kt|cs|swift)$")  # FooTest.java, not latest.java
_GENERATED_FILE = re.compile(r"(_pb2(_grpc)?\.pyi?$|\.pb\.(go|h|cc)$|\.min\.(js|css)$|\.map$|\.snap$"
                             r"|\.generated\.\w+$|_generated\.\w+$)")
_DOCKER_FILE = re.compile(r"^(dockerfile(\..*)?|.*\.dockerfile|docker-compose.*\.ya?ml|compose\.ya?ml)$")


def _ext(path: str) -> str:
    """The lower-case extension of a path's file name ('' when it has none)."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.rsplit(".", 1)[1] if "." in name.lstrip(".") else ""


def classify_path(path: str) -> FileKind:
    """The kind of one changed file, from its path alone (checked most specific first)."""
    lower = path.strip("/").lower()
    parts = lower.split("/")
    name, dirs = parts[-1], parts[:-1]
    ext = _ext(name)
    if name in _LOCK_NAMES or (ext == "lock" and not dirs[:1] == ["docs"]):
        return FileKind.LOCKFILE
    if _GENERATED_FILE.search(name) or any(d in _GENERATED_DIRS for d in dirs):
        return FileKind.GENERATED
    if name in _CI_NAMES or (dirs and dirs[0] in _CI_DIRS):
        return FileKind.CI
    if name.startswith(_DOC_NAME_PREFIXES) and ext in _DOC_EXT | {""}:
        return FileKind.DOCS
    if (_TEST_FILE.search(name) or _CAMEL_TEST_FILE.search(path)
            or any(d in _TEST_DIRS for d in dirs)):
        return FileKind.TEST
    if (dirs and dirs[0] in _DOC_DIRS) or (not dirs and name in _DOC_CONFIG_NAMES):
        return FileKind.DOCS
    if (dirs and dirs[0] in _TOOLING_DIRS) or any(d in _NESTED_TOOLING_DIRS for d in dirs):
        return FileKind.TOOLING
    if (name in _BUILD_NAMES or _DOCKER_FILE.match(name) or ext in ("cmake", "bzl", "gradle", "mk")
            or (dirs and dirs[0] in ("cmake", "docker", "packaging"))):
        return FileKind.BUILD
    if (name in _DEP_NAMES or re.match(r"^(requirements|constraints).*\.(txt|in)$", name)
            or (dirs and dirs[-1] == "requirements" and ext in ("txt", "in"))):
        return FileKind.DEPENDENCY
    if ext in _SOURCE_EXT:
        return FileKind.SOURCE
    if ext in _CONFIG_EXT or name.startswith(".") or name.endswith(("rc", ".env.example")):
        return FileKind.CONFIG
    if ext in _DOC_EXT:
        return FileKind.DOCS
    return FileKind.OTHER


# =============================================================================================
# Titles: type, tags, markers
# =============================================================================================

_PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
_BRACKET = re.compile(r"\[([^\[\]]{1,40})\]\s*:?")
_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?\s*:\s*(?P<rest>.+)$")
_AREA_PREFIX = re.compile(r"^[\w./-]{1,40}:\s+(?=\S)")  # Go style "net/http: fix …": an area
_REVERT_TITLE = re.compile(r"""^\s*revert(?:ed|s)?\b\s*:?\s*["“']?(?P<inner>.*?)["”']?\s*$""", re.I)
_MERGE_TITLE = re.compile(r"^Merge (pull request #\d+ from \S+|branch '[^']+'( of \S+)?( into \S+)?)$")

CONVENTIONAL_TYPES: dict[str, ChangeType | None] = {
    "feat": ChangeType.FEATURE, "feature": ChangeType.FEATURE, "fix": ChangeType.BUGFIX,
    "bugfix": ChangeType.BUGFIX, "hotfix": ChangeType.BUGFIX, "perf": ChangeType.PERFORMANCE,
    "refactor": ChangeType.REFACTOR, "style": ChangeType.REFACTOR, "cleanup": ChangeType.REFACTOR,
    "docs": ChangeType.DOCS,
    "doc": ChangeType.DOCS, "test": ChangeType.TESTS, "tests": ChangeType.TESTS,
    "ci": ChangeType.CI_BUILD, "build": ChangeType.CI_BUILD, "revert": ChangeType.REVERT,
    "deps": ChangeType.DEPENDENCIES, "dep": ChangeType.DEPENDENCIES,
    "security": ChangeType.SECURITY, "sec": ChangeType.SECURITY, "config": ChangeType.CONFIG,
    "deprecate": ChangeType.REMOVAL, "deprecation": ChangeType.REMOVAL, "remove": ChangeType.REMOVAL,
    # Recognised (and stripped) but say nothing about the type: the files decide.
    "chore": None, "misc": None, "release": None, "wip": None, "init": None,
}
_DEP_SCOPES = frozenset({"deps", "dep", "deps-dev", "dependencies", "dependency"})

# Bracket tags, normalised (lower case, no spaces/dots/hyphens/underscores). Area tags such as
# [Model], [Kernel], [Frontend], [Core], [ROCm] are kept for the reader but carry no type.
TAG_TYPES: dict[str, ChangeType] = {
    **dict.fromkeys(["bugfix", "bug", "fix", "hotfix", "bugfixes", "fixes"], ChangeType.BUGFIX),
    **dict.fromkeys(["ci", "build", "cicd", "infra"], ChangeType.CI_BUILD),
    **dict.fromkeys(["docs", "doc", "documentation"], ChangeType.DOCS),
    **dict.fromkeys(["perf", "performance", "optimization", "optimisation", "speedup"],
                    ChangeType.PERFORMANCE),
    **dict.fromkeys(["refactor", "refactoring", "cleanup", "clean", "style", "lint"],
                    ChangeType.REFACTOR),
    **dict.fromkeys(["feature", "feat", "newmodel", "newfeature", "enhancement"], ChangeType.FEATURE),
    **dict.fromkeys(["test", "tests", "testing", "ut", "unittest"], ChangeType.TESTS),
    **dict.fromkeys(["deprecation", "deprecate", "deprecated", "removal", "remove"],
                    ChangeType.REMOVAL),
    **dict.fromkeys(["security", "cve", "vulnerability"], ChangeType.SECURITY),
    **dict.fromkeys(["deps", "dependencies", "dependency", "dep"], ChangeType.DEPENDENCIES),
    **dict.fromkeys(["revert"], ChangeType.REVERT),
    **dict.fromkeys(["config", "configuration"], ChangeType.CONFIG),
}
# When a title carries several type tags ([Bugfix][CI]), the more consequential one names it.
TYPE_PRECEDENCE = (ChangeType.SECURITY, ChangeType.REVERT, ChangeType.REMOVAL, ChangeType.BUGFIX,
                   ChangeType.PERFORMANCE, ChangeType.FEATURE, ChangeType.REFACTOR,
                   ChangeType.DEPENDENCIES, ChangeType.CONFIG, ChangeType.TESTS, ChangeType.DOCS,
                   ChangeType.CI_BUILD)

_VERBS: dict[str, ChangeType] = {
    **dict.fromkeys("""add adds added adding introduce introduces introduced implement implements
        implemented support supports supported enable enables enabled enabling allow allows provide
        provides new create creates expose exposes extend extends initial detect detects report reports
        emit emits warn warns""".split(), ChangeType.FEATURE),
    **dict.fromkeys("""fix fixes fixed fixing bugfix hotfix resolve resolves resolved correct corrects
        corrected repair repairs prevent prevents avoid avoids handle handles workaround preserve
        preserves keep keeps retain retains guard guards skip skips respect respects honor honour
        honors align aligns restore restores ensure ensures""".split(),
                    ChangeType.BUGFIX),
    **dict.fromkeys("""remove removes removed removing delete deletes deleted drop drops dropped
        deprecate deprecates deprecated deprecating retire retires""".split(), ChangeType.REMOVAL),
    **dict.fromkeys("""refactor refactors refactored restructure reorganize reorganise rename renames
        renamed move moves moved cleanup clean simplify simplifies extract split consolidate unify
        use uses replace replaces migrate rewrite decouple dedupe deduplicate tidy""".split(),
                    ChangeType.REFACTOR),
    **dict.fromkeys("""optimize optimise optimizes optimises optimized optimised speed speedup
        accelerate accelerates""".split(), ChangeType.PERFORMANCE),
    **dict.fromkeys("bump bumps upgrade upgrades downgrade pin pins unpin".split(),
                    ChangeType.DEPENDENCIES),
    **dict.fromkeys("document documents".split(), ChangeType.DOCS),
}
# "Remove unused X" / "Remove usage of deprecated Y" clean up; they do not take a feature away.
_CLEANUP_OBJECT = re.compile(r"\b(unused|redundant|dead|duplicated?|obsolete|stale|leftover|usages? of|"
                             r"unnecessary|useless)\b", re.I)
_PERF_WORDS = re.compile(r"\b(speed ?up|faster|performance|latency|throughput|reduce (memory|overhead)"
                         r"|memory usage|optimi[sz]\w*)\b", re.I)
_DEP_WORDS = re.compile(r"\b(version constraints?|dependenc(y|ies)|requirements?)\b", re.I)
# Words that claim a security fix. A bare "security" ("Add security headers option") only notes it.
_SECURITY_WORDS = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(-\w{4}){3}|security (fix|issue|bug|hole|patch|advisory)"
                             r"|vulnerab\w+|XSS|CSRF|SSRF|RCE|(sql|command|code|header|template) injection"
                             r"|path traversal|privilege escalation|auth(entication)? bypass)\b", re.I)
_SECURITY_MENTION = re.compile(r"\bsecurity\b", re.I)
_CVE = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-\w{4}){3})\b", re.I)
_COSMETIC = re.compile(r"\b(typos?|spelling|misspell\w*|formatting|reformat\w*|code format|lint(s|ing|er)?"
                       r"|whitespace|ruff|flake8|pylint|eslint|prettier|isort|yapf|clang-format|mypy"
                       r"|pre-commit|type hints?|type annotations?|type coverage|type check(ing|er)?|typing|code style)\b", re.I)
_BREAKING = re.compile(r"\bbreaking\b", re.I)
# "Reject …", "Require …", "Disallow …": input that was accepted is refused after this change.
_REJECT_WORDS = re.compile(r"^(reject|refuse|disallow|forbid|enforce|require|deny|block|prohibit)s?\b"
                           r"|\b(reject\w*|refus\w*|disallow\w*|forbid\w*|enforc\w*|prohibit\w*"
                           r"|no longer (accept|allow)\w*|rais(e|es|ing) (an? )?(explicit )?[`'\"]?\w*error"
                           r"|error (on|for|when))\b", re.I)
_NEGATED = re.compile(r"\b(do not|don't|does not|doesn't|no|not|never|stop|avoid|without|unnecessar\w*)\s+(\w+\s+)?$", re.I)
# Words that put a change on a trust boundary even when nobody wrote "security".
_GUARD_WORDS = re.compile(r"\b(insecure|bypass\w*|integrity|md5|sha-?1|reserved|(path|directory|zip|archive)[- ]traversal"
                          r"|escap(e|es|ing)|symlinks?|untrusted|spoof\w*|tamper\w*|injection|sanitiz\w*"
                          r"|credentials?|secrets|secret (keys?|tokens?|values?)|api[- ]keys?|privilege\w*|permissions?"
                          r"|checksums?|hash-checking|require-hashes)\b",
                          re.I)
_CRASH_WORDS = re.compile(r"\b(crash\w*|segfault\w*|segmentation fault|illegal instruction|invalidinstruction"
                          r"|sigill|sigsegv|core dump\w*|panic(s|ked)?|stack overflow)\b", re.I)
_PATHOLOGY_WORDS = re.compile(r"\b(exponential\w*|quadratic\w*|hang(s|ing)?|pathological\w*|blow-?up"
                              r"|never (terminat|finish)\w*|super-?linear)\b", re.I)
_PRESERVING = re.compile(r"\b(pure(ly)? refactor\w*|no (functional|behaviou?r(al)?) changes?|behaviou?r[- ]preserving"
                         r"|without changing (any of )?the (logic|behaviou?r)|should(™)? have no effect"
                         r"|no user[- ]visible change\w*|does not change (the )?behaviou?r|non-functional change)\b", re.I)
_RELEASE_TITLE = re.compile(r"^\s*(release|releasing|prepare (for )?release|bump( version)?( to)?|version)\s*:?\s*"
                            r"v?\d+\.\d+(\.\d+)?([-.]?\w+)?\s*$|^\s*(prepare )?release v?\d+\.\d+", re.I)
# "Add support for Python 3.15", "Drop Node 18": who can run the project changes.
_RUNTIME_SUPPORT = re.compile(r"\b(support\w*|drop\w*|deprecat\w*|remov\w*|require\w*)\b.*\b(python|cpython|pypy|node(\.?js)?"
                              r"|rust|go|cuda|rocm|java|jdk|ruby|php|\.net)\s*v?\d+(\.\d+)?", re.I)
_RUNTIME_NAME = re.compile(r"\b(python|cpython|pypy|node(\.?js)?|rust|go|cuda|rocm|java|jdk|ruby|php|\.net)\s*v?\d+(\.\d+)?",
                           re.I)
_HARDENING_WORDS = re.compile(r"\b(harden\w*|isolat\w*|credentials?|permissions?|least[- ]privilege|poison\w*"
                              r"|injection|caches?|cache-aware)\b", re.I)
_DEFAULT_WORDS = re.compile(r"\b(by default|defaults? to|change[sd]? (the )?defaults?|new defaults?"
                            r"|default value)\b", re.I)
_BUMP_FROM_TO = re.compile(r"\b(?:bump|bumps|update|updates|upgrade|upgrades)\s+(?:dependency\s+)?"
                           r"(?P<name>[@\w./-]+)(?:\s+requirement)?\s+from\s+[~^>=<v ]*(?P<old>\d[\w.]*)"
                           r"\s+to\s+[~^>=<v ]*(?P<new>\d[\w.]*)", re.I)
# Renovate names a major update "to v3" and a minor/patch one "to v2.3.1".
_RENOVATE_MAJOR = re.compile(r"\bupdate\s+(?:dependency\s+|module\s+)?(?P<name>[@\w./-]+)"
                             r"(?:\s+\w+)?\s+to\s+v(?P<new>\d+)\s*$", re.I)


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


def _norm_tag(tag: str) -> str:
    return re.sub(r"[\s._-]+", "", tag.lower())


def _split_tag(tag: str) -> list[str]:
    """'[CI/Build]' → ['CI', 'Build']; '[Bugfix, Perf]' → two tags."""
    return [t.strip() for t in re.split(r"[/,|+&]", tag) if t.strip()]


def _first_type(types: Iterable[ChangeType]) -> ChangeType | None:
    found = set(types)
    return next((t for t in TYPE_PRECEDENCE if t in found), None)


def _breaking_in(text: str) -> bool:
    """'breaking' as a claim, not 'non-breaking' / 'not breaking' / 'no breaking'."""
    for m in _BREAKING.finditer(text):
        before = text[max(0, m.start() - 5):m.start()].lower()
        if not re.search(r"(non-|non |not |no |un)$", before):
            return True
    return False


def _breaking_in_body(body: str) -> bool:
    """The conventional footer ('BREAKING CHANGE: …') or a ticked template box."""
    return bool(re.search(r"^\s*BREAKING[ -]CHANGES?\b", body, re.M)
                or re.search(r"^\s*[-*]\s*\[[xX]\]\s*breaking", body, re.M))


def _rejects(text: str) -> str:
    """The first 'reject/require …' word that is not negated ('Do not error on …')."""
    for m in _REJECT_WORDS.finditer(text):
        if not _NEGATED.search(text[max(0, m.start() - 30):m.start()]):
            return re.sub(r"[`'\"]", "", m.group(0)).lower()
    return ""


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
    conv = _CONVENTIONAL.match(subject)
    revert = _REVERT_TITLE.match(subject)
    if revert and not conv:
        inner = revert.group("inner").strip()
        return _Prefix(inner or subject, ChangeType.REVERT, reverted=inner)
    if conv and conv.group("type").lower() in CONVENTIONAL_TYPES:
        kind = conv.group("type").lower()
        scope = (conv.group("scope") or "").strip()
        rest = conv.group("rest").strip()
        ctype = CONVENTIONAL_TYPES[kind]
        if scope.lower() in _DEP_SCOPES and kind in ("chore", "build", "fix", "ci", "deps"):
            ctype = ChangeType.DEPENDENCIES  # Dependabot's "build(deps):", Renovate's "fix(deps):"
        reverted = rest.strip("\"“”'") if ctype is ChangeType.REVERT else ""
        return _Prefix(rest, ctype, kind, scope, bool(conv.group("bang")), reverted)
    if _AREA_PREFIX.match(subject):
        return _Prefix(_AREA_PREFIX.sub("", subject, count=1))
    return _Prefix(subject)


def _read_bump(subject: str) -> tuple[str, str, str] | None:
    m = _BUMP_FROM_TO.search(subject)
    if m:
        return m.group("name"), m.group("old"), m.group("new")
    m = _RENOVATE_MAJOR.search(subject)
    return (m.group("name"), "", m.group("new")) if m else None


def parse_title(title: str, body: str = "") -> TitleInfo:
    """Read everything the title (and the body's markers) say about the change."""
    text = _clean_title(title, body)
    tags = tuple(t for m in _BRACKET.finditer(text) for t in _split_tag(m.group(1).strip()))
    tag_keys = [_norm_tag(t) for t in tags]
    prefix = _read_prefix(_BRACKET.sub(" ", text).strip(" :-–—"))

    tag_type = _first_type(TAG_TYPES[k] for k in tag_keys if k in TAG_TYPES)
    if prefix.change_type is ChangeType.REVERT:
        change_type: ChangeType | None = ChangeType.REVERT
    else:
        change_type = _first_type(t for t in (prefix.change_type, tag_type) if t is not None)
    strong = change_type is not None  # the author labelled it: a tag, a prefix or "Revert"
    if change_type is None:
        change_type = _verb_type(prefix.subject)
    bump = _read_bump(prefix.subject)
    if bump and change_type in (None, ChangeType.REFACTOR, ChangeType.FEATURE):
        change_type = ChangeType.DEPENDENCIES

    release = bool(_RELEASE_TITLE.search(prefix.subject)) or bool(_RELEASE_TITLE.search(text))
    if release and prefix.change_type is not ChangeType.REVERT:
        bump = None  # "Bump 0.16.4" is this project's version, not a dependency
        if change_type in (None, ChangeType.DEPENDENCIES, ChangeType.FEATURE, ChangeType.REFACTOR):
            change_type = ChangeType.OTHER
    body_text = first_paragraphs(body)
    guard_title = _GUARD_WORDS.search(text)
    guard_body = _GUARD_WORDS.search(body_text)
    preserving = bool(_PRESERVING.search(body)) or bool(_PRESERVING.search(text))
    if preserving and change_type in (None, ChangeType.FEATURE, ChangeType.OTHER, ChangeType.PERFORMANCE) and not strong:
        change_type = ChangeType.REFACTOR
    cve = _CVE.search(f"{title}\n{body}")
    security = bool(_SECURITY_WORDS.search(text)) or bool(cve) or ChangeType.SECURITY in (change_type, tag_type)
    return TitleInfo(
        subject=prefix.subject, change_type=change_type, strong=strong, tags=tags, scope=prefix.scope,
        breaking=(prefix.bang or any("breaking" in k for k in tag_keys)
                  or _breaking_in(text) or _breaking_in_body(body)),
        cosmetic=(bool(_COSMETIC.search(text)) or prefix.conventional == "style"
                  or any(k in ("typo", "lint", "style", "format") for k in tag_keys)),
        security=security, security_mention=bool(_SECURITY_MENTION.search(text)) and not security,
        cve=cve.group(0).upper() if cve else "",
        default_change=bool(_DEFAULT_WORDS.search(text)), reverted_title=prefix.reverted, bump=bump,
        rejects=_rejects(prefix.subject), guard=(guard_title or guard_body).group(0) if (guard_title or guard_body) else "",
        guard_in_title=bool(guard_title), crash=bool(_CRASH_WORDS.search(f"{text}\n{body_text}")),
        pathology=bool(_PATHOLOGY_WORDS.search(f"{text}\n{body_text}")), preserving=preserving,
        release=release, hardening=bool(_HARDENING_WORDS.search(text)),
        runtime_support=(_RUNTIME_NAME.search(m.group(0)).group(0) if (m := _RUNTIME_SUPPORT.search(
            prefix.subject)) else ""),
    )


# =============================================================================================
# File statistics
# =============================================================================================

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


def file_stats(commit: Commit, files: Sequence[FileChange]) -> FileStats:
    classified = tuple((f, classify_path(f.path)) for f in files)
    if files:
        return FileStats(classified, len(files), sum(f.additions for f in files),
                         sum(f.deletions for f in files), known=True)
    return FileStats((), commit.files_changed or 0, commit.additions or 0, commit.deletions or 0,
                     known=False)


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


# =============================================================================================
# Facts read from the patches
# =============================================================================================

_PY_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async\s+)?(?:def|class)\s+(?P<name>[A-Za-z]\w*)\s*[(:]")
_JS_EXPORT = re.compile(r"^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?"
                        r"(?:function\*?|class|const|let|var|interface|type|enum)\s+(?P<name>[A-Za-z$][\w$]*)")
_GO_DEF = re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?|type\s+)(?P<name>[A-Z]\w*)\b")
# Top-level items only: `pub fn new` inside an `impl` is a method, and `pub(crate)` is not public.
_RUST_DEF = re.compile(r"^pub\s+(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|type|mod|const|static)"
                       r"\s+(?P<name>[A-Za-z_]\w*)")
_JAVA_DEF = re.compile(r"^\s*public\s+(?:static\s+|final\s+|abstract\s+|sealed\s+)*"
                       r"(?:(?:class|interface|enum|record)\s+(?P<type>\w+)|[\w<>\[\], ?]+\s+(?P<method>\w+)\s*\()")
_FLAG_CALL = re.compile(r"add_argument|\.option\(|Option\(|\bflag\.|\.flag\(|\barg\(")
_HIDDEN_FLAG = re.compile(r"argparse\.SUPPRESS|\bSUPPRESS\b|\bhide\s*=\s*true\b|\bhidden\s*=\s*True\b|\.hide\(true\)")
_FLAG_NAME = re.compile(r"""["'](--[A-Za-z0-9][\w-]*)["']""")
_CONFIG_TOKENS = frozenset({"config", "configs", "configuration", "settings", "defaults", "default",
                            "envs", "env", "options", "constants", "flags", "conf", "arg_utils",
                            "cli_args", "args"})
_ASSIGNMENT = re.compile(r"""^(?P<indent>\s*)["']?(?P<key>[A-Za-z_][\w.-]*)["']?\s*"""
                         r"""(?::\s*[\w\[\], .|"']+?\s*=|=|:)\s*(?P<val>[^#]*?)\s*,?\s*(?:#.*)?$""")
_ENV_DEFAULT = re.compile(r"""(?:getenv|environ\.get)\(\s*["'](?P<key>\w+)["']\s*,\s*(?P<val>[^)]+?)\s*\)""")
_LITERAL = re.compile(r"""^(-?\d[\d_.]*(e-?\d+)?|true|false|none|null|nil|"[^"]*"|'[^']*'|[\w.-]+)$""", re.I)
_REQUIREMENT = re.compile(r"^(?P<name>[@A-Za-z0-9][\w.@/-]*)(?:\[[^\]]*\])?\s*"
                          r"(?:[:=]\s*(?:\{\s*version\s*=\s*)?)?\s*(?:==|>=|~=|<=|<|>|!=|\^|~|=)?\s*"
                          r"v?(?P<ver>\d+(?:\.\d+)*)")
_NOT_PACKAGES = frozenset({"python", "requires-python", "version", "name", "go", "toolchain",
                           "edition", "rust-version", "node", "npm", "engines", "python_requires"})
_SECURITY_TOKENS = frozenset({"auth", "authn", "authz", "authentication", "authorization", "oauth",
                              "oauth2", "oidc", "saml", "crypto", "cryptography", "ssl", "tls", "jwt",
                              "password", "passwords", "secret", "secrets", "permission",
                              "permissions", "sandbox", "csrf", "security", "acl", "rbac", "cert",
                              "certs", "certificate", "certificates", "keyring", "credentials",
                              "login", "sanitize", "sanitizer"})
_GPU_EXT = frozenset({"cu", "cuh", "hip", "metal", "cl", "ptx", "triton", "wgsl"})
_IMPORT_PATH_EXT = frozenset({"py", "go", "ts", "tsx", "js", "jsx", "mjs", "rs"})


MAX_PATCH_LINE = 400  # longer lines (minified code, data) say nothing these rules read


def _diff_lines(patch: str | None) -> Iterator[tuple[str, str]]:
    """(sign, text) for every line of a unified diff; sign '@' marks a hunk boundary."""
    for line in (patch or "").splitlines():
        if len(line) > MAX_PATCH_LINE:
            yield " ", ""  # keeps block boundaries without feeding the regexes a huge line
        elif line.startswith("@@"):
            yield "@", line
        elif line[:1] in ("+", "-", " ") and not line.startswith(("+++ ", "--- ")):
            yield line[0], line[1:]


def _change_blocks(patch: str | None) -> Iterator[tuple[list[str], list[str]]]:
    """Each run of removed lines with the added lines that replace it."""
    minus: list[str] = []
    plus: list[str] = []
    for sign, text in _diff_lines(patch):
        if sign == "-":
            if plus:
                yield minus, plus
                minus, plus = [], []
            minus.append(text)
        elif sign == "+":
            plus.append(text)
        else:
            if minus or plus:
                yield minus, plus
            minus, plus = [], []
    if minus or plus:
        yield minus, plus


def _public_names(line: str, ext: str) -> str | None:
    if ext in ("py", "pyi", "pyx"):
        m = _PY_DEF.match(line)
        # Module level only: method names (get_name, forward) repeat across classes, so a method
        # "removed" here is usually defined again elsewhere and would be noise.
        return m.group("name") if m and not m.group("indent") else None
    if ext in ("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"):
        m = _JS_EXPORT.match(line)
    elif ext == "go":
        m = _GO_DEF.match(line)
    elif ext == "rs":
        m = _RUST_DEF.match(line)
    elif ext in ("java", "kt", "cs", "scala"):
        m = _JAVA_DEF.match(line)
        return (m.group("type") or m.group("method")) if m else None
    else:
        return None
    return m.group("name") if m else None


def _version_major(version: str) -> tuple[int, int]:
    nums = [int(n) for n in re.findall(r"\d+", version)[:2]] + [0, 0]
    return nums[0], nums[1]


def is_major_bump(old: str, new: str) -> bool:
    """A semver-major step: 1.x → 2.x, or 0.3 → 0.4 (0.x minors break by convention)."""
    if not old:
        return True  # Renovate only writes "to v3" (no minor) for a major update
    (o_major, o_minor), (n_major, n_minor) = _version_major(old), _version_major(new)
    return n_major != o_major or (o_major == 0 and n_minor != o_minor)


@dataclass(frozen=True)
class DiffFacts:
    removed_api: tuple[str, ...] = ()  # public definitions deleted and not re-added anywhere
    removed_api_in_removed_files: bool = False
    removed_flags: tuple[str, ...] = ()
    added_flags: tuple[str, ...] = ()
    default_changes: tuple[tuple[str, str, str, str], ...] = ()  # (path, key, old, new)
    major_bumps: tuple[tuple[str, str, str], ...] = ()  # (package, old, new)
    added_deps: tuple[str, ...] = ()
    removed_deps: tuple[str, ...] = ()
    security_paths: tuple[str, ...] = ()
    gpu_kernels: tuple[str, ...] = ()
    moved_modules: tuple[tuple[str, str], ...] = ()  # (old path, new path) of importable files
    removed_surface_files: tuple[str, ...] = ()  # deleted source files on the public surface
    release_edits: tuple[str, ...] = ()  # "panic = \"abort\" in [profile.release]", "rust-version 1.95 → 1.96"
    shipped_dep_changes: tuple[str, ...] = ()  # dependencies of what ships (not dev/test groups)
    dev_only_deps: bool = False  # every dependency edit is in a dev/test/docs group or tooling
    surface_kinds: tuple[str, ...] = ()  # profile surface kinds touched ("cli", "settings" …)
    hunk_names: tuple[str, ...] = ()  # functions/classes named by the hunk headers of source files


def _is_config_path(path: str, kind: FileKind) -> bool:
    if kind is FileKind.CONFIG:
        return True
    if kind is not FileKind.SOURCE:
        return False
    tokens = set(re.split(r"[/.]", path.lower()))
    return bool(tokens & _CONFIG_TOKENS) or path.lower().rsplit("/", 1)[-1].split(".")[0].endswith("_config")


# Prose is not a default: a changed "description" or "help" text changes no behaviour.
_PROSE_KEYS = re.compile(r"(^|[._-])(description|desc|help|doc|docs|docstring|title|summary|message|msg|comment"
                         r"|example|examples|label|text|markdownDescription|deprecationMessage)$", re.I)


def _is_literal_value(val: str) -> bool:
    """A value that configures something: a number, a boolean, null, or a short word — not prose."""
    v = val.strip().strip(",")
    if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
        v = v[1:-1]
        return len(v) <= 40 and " " not in v.strip()
    return bool(_LITERAL.match(v))


def _assignments(lines: list[str], in_config_file: bool) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        for m in _ENV_DEFAULT.finditer(line):
            found[m.group("key")] = m.group("val").strip()
        m = _ASSIGNMENT.match(line)
        if not m or len(m.group("indent").expandtabs(4)) > (8 if in_config_file else 4):
            continue
        val = m.group("val").strip().rstrip(",")
        if _PROSE_KEYS.search(m.group("key")):
            continue
        if val and _LITERAL.match(val) and _is_literal_value(val) and not val.endswith(("(", "[", "{", "\\")):
            found.setdefault(m.group("key"), val)
    return found


def _default_changes(f: FileChange, kind: FileKind) -> list[tuple[str, str, str, str]]:
    changes = []
    for minus, plus in _change_blocks(f.patch):
        if not minus or not plus:
            continue
        old = _assignments(minus, kind is FileKind.CONFIG)
        new = _assignments(plus, kind is FileKind.CONFIG)
        for key in old.keys() & new.keys():
            a, b = old[key].strip("\"'"), new[key].strip("\"'")
            if a != b:
                changes.append((f.path, key, old[key], new[key]))
    # A targeted edit changes a default; rewriting many values is a data table (tuned kernel
    # configs, fixtures), which would make every such commit look like a behaviour change.
    return changes if len(changes) <= 3 else []


def _requirements(lines: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        text = re.sub(r"""["',]""", " ", line).strip()
        text = re.sub(r"^(require|dependency|implementation|api)\s+", "", text)
        m = _REQUIREMENT.match(text)
        if m and m.group("name").lower() not in _NOT_PACKAGES:
            found.setdefault(m.group("name").lower(), m.group("ver"))
    return found


_DEV_GROUP = re.compile(r"(dev|test|lint|doc|typing|bench|mypy|format|tool\.|dependency-groups|constraint"
                        r"|\bci\b|example|fuzz|release-tooling)", re.I)
_DEV_MANIFEST = re.compile(r"(^|[-_./])(dev|test|tests|testing|lint|docs?|typing|bench\w*|ci)([-_.]|$)", re.I)
_SECTION = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")
_ARRAY_KEY = re.compile(r"""^\s*["']?([\w.-]+)["']?\s*[=:]\s*[\[{]\s*$""")
_PROFILE_KEYS = re.compile(r"^\s*(panic|lto|codegen-units|opt-level|strip|debug|debug-assertions|overflow-checks"
                           r"|incremental|rpath)\s*=\s*(.+?)\s*$")
_TOOLCHAIN_FLOOR = re.compile(r"""^\s*["']?(rust-version|requires-python|python_requires|msrv)["']?\s*[=:]\s*["']?"""
                              r"""([^"',]+)["']?""", re.I)
_COMPILER_FLAGS = re.compile(r"(RUSTFLAGS|rustflags|target-cpu|target-feature|CFLAGS|CXXFLAGS|-march=|-mtune=|-O[0-3s]\b"
                             r"|-ffast-math|-flto)")
_HUNK_NAME = re.compile(r"\b(?:fn|def|class|impl(?:<[^>]*>)?|struct|enum|trait|func|function|interface|type)\s+"
                        r"(?:[\w<>',\s]+\s+for\s+)?([A-Za-z_]\w*)")


# Pins of the contributors' toolchain, not settings a user has.
_TOOLCHAIN_PIN = re.compile(r"^(rust-toolchain(\.toml)?|\.python-version|\.nvmrc|\.node-version|\.tool-versions"
                            r"|\.ruby-version|\.go-version)$")


def _manifest_blocks(patch: str | None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(group, removed lines, added lines) per change block of a manifest: the group is the last
    `[section]` or `key = [` seen (hunk header, context or changed lines), '' when unknown."""
    group = ""
    minus: list[str] = []
    plus: list[str] = []
    for sign, text in _diff_lines(patch):
        if sign == "@":
            if minus or plus:
                yield group, minus, plus
                minus, plus = [], []
            header = text.split("@@")[-1].strip() if text.count("@@") >= 2 else ""
            m = _SECTION.match(header) or _ARRAY_KEY.match(header)
            group = m.group(1) if m else ""
            continue
        m = _SECTION.match(text) or _ARRAY_KEY.match(text)
        if sign in "+-":
            (minus if sign == "-" else plus).append(text)
        elif minus or plus:
            yield group, minus, plus
            minus, plus = [], []
        if m:
            group = m.group(1)
    if minus or plus:
        yield group, minus, plus


def _is_root_manifest(path: str, profile: RepoProfile) -> bool:
    """A manifest of something that ships: at the root, in a declared package, or in any
    directory that is not tooling, tests, docs or examples (a monorepo's `core/Cargo.toml`)."""
    parts = path.strip("/").split("/")
    if len(parts) == 1 or any(_pkg_prefix(path, p) for p in profile.surface.get("packages", ())):
        return True
    if profile.surface.get("packages"):
        return False
    dirs = [d.lower() for d in parts[:-1]]
    return not any(d in _TOOLING_DIRS or d in _NESTED_TOOLING_DIRS or d in _TEST_DIRS or d in _DOC_DIRS
                   or d in ("example", "examples") for d in dirs)


def _pkg_prefix(path: str, package: str) -> bool:
    package = package.strip("/")
    return bool(package) and (path.startswith(package + "/") or path.rsplit("/", 1)[0] == package)


def _release_edits(f: FileChange, kind: FileKind, profile: RepoProfile) -> tuple[list[str], list[str], bool]:
    """(release-relevant edits, shipped dependency names changed, any dev-only dependency edit)."""
    edits: list[str] = []
    shipped: list[str] = []
    dev_only = False
    name = f.path.rsplit("/", 1)[-1].lower()
    shipped_manifest = (_is_root_manifest(f.path, profile) and not profile.is_internal(f.path)
                        and not _DEV_MANIFEST.search(name.rsplit(".", 1)[0]))
    # The image users pull is a shipped artefact: its base, entry point or layout changing counts
    # (an unknown patch too, since any line may be one of those).
    if kind is FileKind.BUILD and _DOCKER_FILE.match(name) and not profile.is_internal(f.path) and (
            f.patch is None or re.search(r"^[+-]\s*(FROM|WORKDIR|ENTRYPOINT|CMD|USER|EXPOSE|ENV|VOLUME)\b",
                                         f.patch, re.M)):
        edits.append(f.path)
    for group, minus, plus in _manifest_blocks(f.patch):
        in_profile = group.lower().startswith("profile.") or "profile" in group.lower()
        release_profile = in_profile and not re.search(r"\b(dev|test|bench)\b", group.lower())
        for line in plus or minus:
            m = _PROFILE_KEYS.match(line)
            if m and name == "cargo.toml" and (release_profile or (not group and not in_profile)):
                where = f" [{group}]" if group else ""
                edits.append(f"{m.group(1)} = {m.group(2)}{where}")

            if name in (".cargo/config.toml", "config.toml", "build.rs", "cmakelists.txt", "setup.py") \
                    and _COMPILER_FLAGS.search(line) and (f.path.startswith(".cargo/") or name != "config.toml"):
                flags = " ".join(dict.fromkeys(re.findall(r"-march=[\w.-]+|-mtune=[\w.-]+|-O[0-3s]\b|-ffast-math|-flto"
                                                          r"|target-(?:cpu|feature)=\S+", line))) or "flags"
                edits.append(f"{flags.strip(chr(34))} ({f.path})")
        old_floor = next((m.group(2).strip() for ln in minus if (m := _TOOLCHAIN_FLOOR.match(ln))), "")
        new_floor = next((m for ln in plus if (m := _TOOLCHAIN_FLOOR.match(ln))), None)
        if new_floor and shipped_manifest and old_floor != new_floor.group(2).strip():
            span = f"{old_floor} → {new_floor.group(2).strip()}" if old_floor else new_floor.group(2).strip()
            edits.append(f"{new_floor.group(1)} {span}")
        if kind in (FileKind.DEPENDENCY, FileKind.BUILD):
            dev = bool(_DEV_GROUP.search(group)) or not shipped_manifest
            local = [ln for ln in plus + minus if re.search(r"\bpath\s*=", ln)]
            plus_ext = [ln for ln in plus if ln not in local]
            minus_ext = [ln for ln in minus if ln not in local]
            changed = (set(_requirements(plus_ext)) | set(_requirements(minus_ext))) if plus_ext != minus_ext else set()
            if changed:
                if dev:
                    dev_only = True
                else:
                    shipped.extend(sorted(changed))
    return edits, shipped, dev_only


def diff_facts(stats: FileStats, title: TitleInfo, profile: RepoProfile | None = None) -> DiffFacts:
    """What the patches (and paths) show beyond line counts."""
    profile = profile or RepoProfile.inferred()
    removed_defs: dict[str, bool] = {}  # name → found in a removed file
    added_defs: set[str] = set()
    flags_removed: set[str] = set()
    flags_added: set[str] = set()
    hidden_flags: set[str] = set()
    defaults: list[tuple[str, str, str, str]] = []
    old_reqs: dict[str, str] = {}
    new_reqs: dict[str, str] = {}
    release: list[str] = []
    shipped: list[str] = []
    dev_deps = False
    hunk_names: list[str] = []
    kinds: list[str] = []
    for f, kind in stats.files:
        ext = _ext(f.path)
        surface = profile.surface_kind(f.path)
        if surface and surface not in kinds:
            kinds.append(surface)
        if kind is FileKind.SOURCE:
            public = profile.is_public(f.path)
            for sign, text in _diff_lines(f.patch):
                if sign == "@":
                    m = _HUNK_NAME.search(text.split("@@")[-1]) if text.count("@@") >= 2 else None
                    if m and m.group(1) not in hunk_names and not m.group(1).startswith("test"):
                        hunk_names.append(m.group(1))
                    continue
                name = _public_names(text, ext) if sign in "+-" and public else None
                if name and name.startswith("_"):
                    name = None  # private by convention
                if name and sign == "-":
                    removed_defs[name] = removed_defs.get(name, False) or f.status == "removed"
                elif name:
                    added_defs.add(name)
                if sign in "+-" and _FLAG_CALL.search(text):
                    (flags_removed if sign == "-" else flags_added).update(_FLAG_NAME.findall(text))
            # A hidden flag (argparse.SUPPRESS, clap's `hide = true`) is not part of the CLI users see.
            for minus, plus in _change_blocks(f.patch):
                if any(_HIDDEN_FLAG.search(line) for line in plus):
                    hidden_flags.update(n for line in plus for n in _FLAG_NAME.findall(line))
        if _is_config_path(f.path, kind) and not profile.is_internal(f.path) \
                and not _TOOLCHAIN_PIN.match(f.path.rsplit("/", 1)[-1].lower()):
            defaults.extend(_default_changes(f, kind))
        if kind in (FileKind.DEPENDENCY, FileKind.BUILD, FileKind.CONFIG):
            edits, names, dev = _release_edits(f, kind, profile)
            release += [e for e in edits if e not in release]
            shipped += [n for n in names if n not in shipped]
            dev_deps = dev_deps or dev
        if (kind is FileKind.DEPENDENCY or (kind is FileKind.BUILD and ext in ("toml", "py", "cfg", "txt"))) \
                and not profile.is_internal(f.path) and _is_root_manifest(f.path, profile):
            for group, minus, plus in _manifest_blocks(f.patch):
                if _DEV_GROUP.search(group) or _DEV_MANIFEST.search(f.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]):
                    continue
                for k, v in _requirements(minus).items():
                    old_reqs.setdefault(k, v)
                for k, v in _requirements(plus).items():
                    new_reqs.setdefault(k, v)

    removed_api = sorted(n for n in removed_defs if n not in added_defs)
    bumps = [(n, old_reqs[n], new_reqs[n]) for n in sorted(old_reqs.keys() & new_reqs.keys())
             if is_major_bump(old_reqs[n], new_reqs[n])]
    if title.bump and is_major_bump(title.bump[1], title.bump[2]) and not (dev_deps and not shipped):
        if not any(b[0].lower() == title.bump[0].lower() for b in bumps):
            bumps.insert(0, title.bump)
    runtime = [(f, k) for f, k in stats.files if k in (FileKind.SOURCE, FileKind.CONFIG, FileKind.BUILD)
               and not profile.is_internal(f.path)]
    security_paths = [f.path for f, _ in runtime
                      if set(re.split(r"[/._-]", f.path.lower())) & _SECURITY_TOKENS]
    gpu = [f.path for f in stats.source if _ext(f.path) in _GPU_EXT]
    moved = [(f.previous_path, f.path) for f in stats.source
             if f.status == "renamed" and f.previous_path and f.previous_path != f.path
             and _ext(f.path) in _IMPORT_PATH_EXT and profile.is_public(f.previous_path)]
    return DiffFacts(
        removed_api=tuple(removed_api),
        removed_api_in_removed_files=any(removed_defs[n] for n in removed_api),
        removed_flags=tuple(sorted(flags_removed - flags_added)),
        added_flags=tuple(sorted(flags_added - flags_removed - hidden_flags)),
        default_changes=tuple(defaults),
        major_bumps=tuple(bumps),
        added_deps=tuple(sorted(new_reqs.keys() - old_reqs.keys())),
        removed_deps=tuple(sorted(old_reqs.keys() - new_reqs.keys())),
        security_paths=tuple(security_paths),
        gpu_kernels=tuple(gpu),
        moved_modules=tuple(moved),
        removed_surface_files=tuple(f.path for f in stats.removed_source if profile.is_public(f.path)),
        release_edits=tuple(release),
        shipped_dep_changes=tuple(shipped),
        dev_only_deps=dev_deps and not shipped and not bumps,
        surface_kinds=tuple(kinds),
        hunk_names=tuple(hunk_names[:6]),
    )


# =============================================================================================
# Change type
# =============================================================================================

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


# "Previously, narrowing was lost …", "Valid calls … currently produce errors", "could panic".
_BUG_STORY = re.compile(r"^(previously|currently)\b|\b(could|would|can) (panic|crash|hang|overflow|fail)\b"
                        r"|\bfalse (positive|negative)s?\b|\bcurrently (produces?|causes?|fails?|panics?|emits?|reports?)\b",
                        re.I)


def decide_change_type(commit: Commit, title: TitleInfo, stats: FileStats) -> ChangeType:
    """The author's own label wins; otherwise uniform files beat a verb; otherwise the verb."""
    if commit.reverts or title.change_type is ChangeType.REVERT:
        return ChangeType.REVERT
    author_said_docs_or_tests = title.strong and title.change_type in (ChangeType.DOCS, ChangeType.TESTS)
    if title.security and not author_said_docs_or_tests and not stats.only({FileKind.DOCS, FileKind.TEST}):
        return ChangeType.SECURITY  # the most consequential reading of "[Bugfix] Fix XSS in …"
    if title.strong and title.change_type is not None:
        return title.change_type
    by_files = _files_type(stats)
    verb = title.change_type
    benchmarked = stats.source and any(
        any(d in _NESTED_TOOLING_DIRS or "benchmark" in d for d in f.path.lower().split("/")[:-1])
        for f in stats.of(FileKind.TOOLING))
    if benchmarked and verb in (None, ChangeType.REFACTOR, ChangeType.OTHER):
        return ChangeType.PERFORMANCE  # the author measured it: source changed with its benchmark
    has_manifests = bool(stats.of(FileKind.DEPENDENCY, FileKind.LOCKFILE)) or not stats.files
    if verb is ChangeType.DEPENDENCIES and has_manifests:
        return ChangeType.DEPENDENCIES
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


# =============================================================================================
# Importance
# =============================================================================================

@dataclass(frozen=True)
class Fact:
    """One rule that fired: the level it asks for and how to say it."""
    level: Importance
    zh: str
    en: str
    size: bool = False  # a size rule: supporting evidence, not a specific fact
    floor: bool = False  # from _cap: a minimum rather than a ceiling

    def text(self, zh: bool) -> str:
        return self.zh if zh else self.en


# (medium at, high at) in changed lines of source code, per type: a feature grows the product
# faster per line than a refactor moves it.
# Changed lines of source code at which a commit is medium, per type. Size alone never makes a
# commit high: a maintainer calls a commit high for what it does (breaks, secures, ships
# differently), and a 2,000-line internal feature is still one team's business.
SIZE_THRESHOLDS: dict[ChangeType, int] = {
    ChangeType.FEATURE: 40,
    ChangeType.PERFORMANCE: 20,
    ChangeType.BUGFIX: 300,
    ChangeType.REFACTOR: 600,
}
DEFAULT_THRESHOLD = 200
WIDE_SOURCE_FILES = 20  # this many source files is medium whatever the line count (not for refactors)
SMALL_REVERT = 20  # source lines: backing out less than this is a small correction
COSMETIC_BIG = 300  # a lint/format sweep this big (source lines) can still break open branches

_TYPE_NOUNS = {
    ChangeType.FEATURE: ("新功能", "Feature"), ChangeType.BUGFIX: ("缺陷修复", "Bug fix"),
    ChangeType.PERFORMANCE: ("性能优化", "Performance change"), ChangeType.REFACTOR: ("重构", "Refactor"),
    ChangeType.DOCS: ("文档改动", "Docs change"), ChangeType.TESTS: ("测试改动", "Test change"),
    ChangeType.CI_BUILD: ("CI/构建改动", "CI/build change"),
    ChangeType.DEPENDENCIES: ("依赖更新", "Dependency update"), ChangeType.CONFIG: ("配置改动", "Config change"),
    ChangeType.REVERT: ("回滚", "Revert"), ChangeType.REMOVAL: ("移除/弃用", "Removal/deprecation"),
    ChangeType.SECURITY: ("安全修复", "Security fix"), ChangeType.OTHER: ("其他改动", "Change"),
}


def _lower_first(text: str) -> str:
    """'The title says' → 'the title says' after a semicolon; leaves 'CVE-…' and 'API' alone."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _noun(ctype: ChangeType, zh: bool) -> str:
    return _TYPE_NOUNS[ctype][0 if zh else 1]


@dataclass(frozen=True)
class _Ctx:
    commit: Commit
    title: TitleInfo
    stats: FileStats
    diff: DiffFacts
    ctype: ChangeType
    profile: RepoProfile = RepoProfile()


def _breaking_facts(c: _Ctx) -> list[Fact]:
    if not c.title.breaking:
        return []
    return [Fact(Importance.HIGH, "提交自称不兼容变更，升级后调用方可能需要修改",
                 "The commit declares a breaking change; callers may need changes after upgrading")]


def _runtime_lines(c: _Ctx) -> int:
    """Changed lines that ship: source outside internal paths, config, build and manifests."""
    if not c.stats.known:
        return c.stats.additions + c.stats.deletions
    return sum(f.changes or 1 for f, k in c.stats.files
               if k in (FileKind.SOURCE, FileKind.CONFIG, FileKind.BUILD, FileKind.DEPENDENCY)
               and not c.profile.is_internal(f.path))


def _security_facts(c: _Ctx) -> list[Fact]:
    facts = []
    t = c.title
    if t.security and c.ctype is ChangeType.REVERT:
        facts.append(Fact(Importance.HIGH, "回滚了一个安全相关的改动，已修复的问题可能重新暴露",
                          "Reverts a security-related change; the issue it fixed may be exposed again"))
    elif t.security or c.ctype is ChangeType.SECURITY:
        what = t.cve or ""
        facts.append(Fact(Importance.HIGH,
                          f"安全修复{f'（{what}）' if what else ''}，受影响版本应尽快升级",
                          f"Security fix{f' ({what})' if what else ''}; affected versions should upgrade soon"))
    elif t.rejects and t.guard and _runtime_lines(c):
        # "Reject MD5-only hashes", "Reject case-variant reserved entry points": small diffs, but
        # they close a hole on a trust boundary and refuse input that used to pass.
        facts.append(Fact(Importance.HIGH,
                          f"在安全相关的检查上（{t.guard}）拒绝以前接受的输入，即使改动很小也会影响用户",
                          f"Newly refuses input on a trust boundary ({t.guard}); small as the diff is, "
                          "input that used to pass now fails"))
    elif t.guard_in_title and _runtime_lines(c):
        facts.append(Fact(Importance.MEDIUM, f"标题涉及安全相关的处理（{t.guard}），且改动了发布的代码",
                          f"The title touches a trust boundary ({t.guard}) and shipped code changes"))
    elif t.security_mention and c.stats.source_lines:
        facts.append(Fact(Importance.MEDIUM, "标题提到安全，且改动了源码",
                          "The title mentions security and source code changes"))
    if t.rejects and not t.guard and _runtime_lines(c) and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
        facts.append(Fact(Importance.MEDIUM, f"开始拒绝以前接受的输入（{t.rejects}），依赖旧行为的调用会失败",
                          f"Newly refuses input that was accepted before (“{t.rejects}”); callers relying on "
                          "the old leniency fail"))
    # Restructuring code under auth/ or crypto/ is not a security change; fixing or adding is.
    if c.diff.security_paths and c.ctype not in (ChangeType.REFACTOR, ChangeType.PERFORMANCE,
                                                  ChangeType.TESTS, ChangeType.DOCS):
        names = _name_list(c.diff.security_paths, True), _name_list(c.diff.security_paths, False)
        facts.append(Fact(Importance.MEDIUM, f"改动触及安全敏感路径 {names[0]}",
                          f"Touches security-sensitive paths ({names[1]})"))
    return facts


def _removal_facts(c: _Ctx) -> list[Fact]:
    facts: list[Fact] = []
    removed = [f for f in c.stats.removed_source if f.path in c.diff.removed_surface_files]
    gone = sum(f.deletions for f in removed)
    if removed:
        n = len(removed)
        level = Importance.HIGH if n >= 5 or gone >= 300 else Importance.MEDIUM
        if c.diff.removed_api_in_removed_files:
            facts.append(Fact(level, f"移除了 {n} 个公开源码文件中的公开 API（−{_num(gone)} 行），依赖它的下游会失效",
                              f"Removes public API in {_count_en(n, 'source file')} "
                              f"(−{_num(gone)} lines); downstream code that uses it will break"))
        else:
            facts.append(Fact(level, f"删除了 {n} 个公开源码文件（−{_num(gone)} 行），仍导入它们的代码会失效",
                              f"Deletes {_count_en(n, 'public source file')} (−{_num(gone)} lines); "
                              "code that still imports them will break"))
    api = c.diff.removed_api
    if api and not c.diff.removed_api_in_removed_files:
        level = Importance.HIGH if len(api) >= 5 else Importance.MEDIUM
        facts.append(Fact(level, f"删除了公开接口 {_name_list(api, True)}，调用方需要迁移",
                          f"Removes public definitions {_name_list(api, False)}; callers must migrate"))
    if c.diff.removed_flags:
        flags = c.diff.removed_flags
        facts.append(Fact(Importance.HIGH, f"移除了命令行参数 {_name_list(flags, True)}，使用它们的脚本会报错",
                          f"Removes command-line {'flag' if len(flags) == 1 else 'flags'} {_name_list(flags, False)}; "
                          "scripts passing them will fail"))
    if c.ctype is ChangeType.REMOVAL and not removed and not api and c.stats.source_lines \
            and not c.title.preserving:
        deleted = c.stats.lines(FileKind.SOURCE)[1] if c.stats.known else c.stats.deletions
        if deleted >= 20:
            facts.append(Fact(Importance.MEDIUM, f"移除或弃用了功能（源码 −{_num(deleted)} 行），使用者需要迁移",
                              f"Removes or deprecates functionality (−{_num(deleted)} source lines); users must migrate"))
    if c.diff.moved_modules:
        moved = [old for old, _ in c.diff.moved_modules]
        facts.append(Fact(Importance.MEDIUM, f"移动了 {len(moved)} 个模块（{_name_list(moved, True, 2)}），按旧路径导入会失效",
                          f"Moves {_count_en(len(moved), 'module')} ({_name_list(moved, False, 2)}); "
                          "imports of the old paths break"))
    return facts


def _behaviour_facts(c: _Ctx) -> list[Fact]:
    facts: list[Fact] = []
    t, d = c.title, c.diff
    if c.ctype is ChangeType.REVERT and c.stats.source_lines >= SMALL_REVERT:
        inner = _clip(t.reverted_title, 60)
        facts.append(Fact(Importance.MEDIUM,
                          f"回滚了已合入的改动{f'「{inner}」' if inner else ''}，依赖它的代码需要复查",
                          f"Reverts a change that had landed{f' (“{inner}”)' if inner else ''}; "
                          "anything relying on it needs checking"))
    if d.default_changes:
        _, key, old, new = d.default_changes[0]
        more_zh = f"等 {len(d.default_changes)} 项" if len(d.default_changes) > 1 else ""
        more_en = f" and {len(d.default_changes) - 1} more" if len(d.default_changes) > 1 else ""
        facts.append(Fact(Importance.MEDIUM, f"修改了配置默认值 {key}（{old} → {new}）{more_zh}",
                          f"Changes the default of {key} ({old} → {new}){more_en}"))
    elif t.default_change and c.ctype not in (ChangeType.DOCS, ChangeType.TESTS) and _runtime_lines(c) \
            and c.stats.source:
        facts.append(Fact(Importance.MEDIUM, "标题表明默认行为有变化，未显式配置的部署会受影响",
                          "The title says a default behaviour changes; deployments relying on defaults are affected"))
    if d.added_flags:
        flags = d.added_flags
        facts.append(Fact(Importance.MEDIUM, f"新增命令行参数 {_name_list(flags, True)}",
                          f"Adds command-line {'flag' if len(flags) == 1 else 'flags'} {_name_list(flags, False)}"))
    for name, old, new in d.major_bumps[:1]:
        span = f"{old} → {new}" if old else f"→ v{new}"
        facts.append(Fact(Importance.MEDIUM, f"依赖 {name} 升级主版本（{span}），可能包含不兼容变更",
                          f"Major version bump of {name} ({span}), which may be incompatible"))
    if d.release_edits:
        edits = list(d.release_edits)
        level = Importance.MEDIUM
        facts.append(Fact(level, f"修改了发布产物的构建方式（{_name_list(edits, True, 2)}），每个发布的二进制或包都会受影响",
                          f"Changes how shipped artefacts are built ({_name_list(edits, False, 2)}); "
                          "every released binary or package is affected"))
    if t.crash and (d.release_edits or d.shipped_dep_changes) and not c.stats.source:
        # The shipped program itself crashed and the fix is in how it is built: every user on the
        # affected platform was hit, whatever the size of the diff.
        names = list(d.release_edits or d.shipped_dep_changes)
        facts.append(Fact(Importance.HIGH, f"修复发布版本的崩溃，改动在构建或依赖（{_name_list(names, True, 2)}），影响所有受影响平台的用户",
                          f"Fixes a crash of the shipped build through its build or dependency set "
                          f"({_name_list(names, False, 2)}); every user on the affected platform was hit"))
    if t.pathology and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS, ChangeType.CI_BUILD) \
            and c.stats.source_lines:
        facts.append(Fact(Importance.MEDIUM, "消除了指数级膨胀或卡死，真实代码上会更快或不再挂起",
                          "Removes an exponential blow-up or hang that real inputs hit"))
    if t.runtime_support and (c.stats.source or c.stats.of(FileKind.BUILD, FileKind.DEPENDENCY)):
        facts.append(Fact(Importance.MEDIUM, f"改变了支持的运行环境（{t.runtime_support}）",
                          f"Changes which runtimes are supported ({t.runtime_support})"))
    if t.release:
        facts.append(Fact(Importance.MEDIUM, "发布提交：版本号更新，随附的改动进入正式版本",
                          "Release commit: the version changes and everything since the last release ships"))
    if c.profile.declared and d.surface_kinds and c.stats.source_lines and c.ctype not in (
            ChangeType.REFACTOR, ChangeType.TESTS, ChangeType.DOCS):
        kinds = "、".join(d.surface_kinds), ", ".join(d.surface_kinds)
        facts.append(Fact(Importance.MEDIUM, f"改动了公开接口（{kinds[0]}）",
                          f"Changes the public surface ({kinds[1]})"))
    return facts


def _size_facts(c: _Ctx) -> list[Fact]:
    stats = c.stats
    if c.title.preserving or (stats.known and not stats.source):
        return []  # "no behaviour change" by the author's word; tooling-only is capped elsewhere
    lines = stats.source_lines
    n_files = len(stats.source)
    adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
    if stats.known:
        internal = [f for f in stats.source if c.profile.is_internal(f.path)]
        lines -= sum(f.changes for f in internal)
        n_files -= len(internal)
    if lines <= 0:
        return []
    medium_at = SIZE_THRESHOLDS.get(c.ctype, DEFAULT_THRESHOLD)
    noun_zh, noun_en = _noun(c.ctype, True), _noun(c.ctype, False)
    where_zh = f"{n_files} 个文件" if stats.known else "未获取到文件明细"
    where_en = _files_en(n_files) if stats.known else "file list unavailable"
    if lines >= medium_at:
        return [Fact(Importance.MEDIUM, f"{noun_zh}，源码改动 {_lines(adds, dels)} 行（{where_zh}）",
                     f"{noun_en} touching {_lines(adds, dels)} lines of source ({where_en})", size=True)]
    if stats.known and n_files >= WIDE_SOURCE_FILES and c.ctype is not ChangeType.REFACTOR:
        return [Fact(Importance.MEDIUM, f"{noun_zh}，改动分布在 {n_files} 个源码文件中",
                     f"{noun_en} spread over {n_files} source files", size=True)]
    return []


def _only_kinds_fact(stats: FileStats) -> Fact:
    """'仅改动文档（2 个文件）' / 'Docs-only change (2 files)'."""
    n = stats.total_files
    if stats.only({FileKind.LOCKFILE}):
        names = [f.path for f in stats.of(FileKind.LOCKFILE)]
        return Fact(Importance.LOW, f"仅更新锁文件（{_name_list(names, True, 2)}），依赖声明未变",
                    f"Lockfile-only update ({_name_list(names, False, 2)}); declared dependencies unchanged")
    counts = Counter(k for _, k in stats.files)
    kinds = [k for k, _ in counts.most_common()]
    zh = "、".join(k.label(True) for k in kinds)
    if zh[:1].isascii():
        zh = " " + zh  # "仅改动 CI 配置": a space between Chinese and Latin text
    if len(kinds) == 1:
        label = kinds[0].label(False)
        en = f"{label[:1].upper() + label[1:]}-only change ({_files_en(n)}); no runtime code touched"
    else:
        en = (f"Only {', '.join(k.label(False) for k in kinds[:-1])} and {kinds[-1].label(False)} files "
              f"change ({_files_en(n)}); no runtime code touched")
    return Fact(Importance.LOW, f"仅改动{zh}（{n} 个文件），不影响运行时代码", en)


def _tooling_fact(stats: FileStats, level: Importance) -> Fact:
    adds, dels = stats.lines(FileKind.TOOLING)
    n = len(stats.of(FileKind.TOOLING))
    return Fact(level, f"只改动了基准、脚本等工具代码（{n} 个文件，{_lines(adds, dels)}），不影响发布的代码",
                f"Only tooling such as benchmarks and scripts changes ({_files_en(n)}, {_lines(adds, dels)}); "
                "shipped code is untouched")


_RELEASE_PIPELINE = re.compile(r"(release|publish|deploy|dist|build-binar)", re.I)


def _pipeline_hardening(c: _Ctx) -> Fact | None:
    """Security hardening of the pipeline that builds and publishes what users install."""
    ci = [f.path for f in c.stats.of(FileKind.CI)]
    if not (c.title.hardening and ci and any(_RELEASE_PIPELINE.search(p.rsplit("/", 1)[-1]) for p in ci)):
        return None
    return Fact(Importance.MEDIUM, "加固了构建和发布流水线（权限、凭据或缓存），关系到发布产物的可信度",
                "Hardens the release pipeline (permissions, credentials or caches) that produces what users install",
                floor=True)


def _cap(c: _Ctx) -> Fact | None:
    """A ceiling: changes that cannot affect what users run, and mechanical sweeps."""
    stats = c.stats
    internal_only = stats.known and stats.files and all(
        k in NON_RUNTIME | {FileKind.TOOLING} or c.profile.is_internal(f.path) for f, k in stats.files)
    if internal_only and not c.diff.release_edits:
        # A security fix to CI workflows (e.g. an unsafe pull_request_target) is real, and so is
        # hardening the release pipeline; other non-runtime commits are low whatever they claim.
        if c.title.security and FileKind.CI in stats.kinds:
            return None
        hardening = _pipeline_hardening(c)
        if hardening:
            return hardening
        if stats.only(NON_RUNTIME):
            return _only_kinds_fact(stats)
        if stats.of(FileKind.TOOLING):
            return _tooling_fact(stats, Importance.LOW)
        return Fact(Importance.LOW, f"只改动了项目内部路径（{_files_en(stats.total_files)}），不影响发布的代码",
                    f"Only internal paths change ({_files_en(stats.total_files)}); shipped code is untouched")
    # "Bump eslint" is not a lint change, and backing out a lint fix is still a revert.
    mechanical = (c.title.cosmetic and not c.title.breaking and not c.title.security
                  and c.ctype not in (ChangeType.DEPENDENCIES, ChangeType.REVERT))
    if mechanical and (stats.known or stats.total_files):
        big = stats.source_lines >= COSMETIC_BIG
        adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
        size_zh = f"（源码 {_lines(adds, dels)} 行）" if adds or dels else ""
        size_en = f" ({_lines(adds, dels)} source lines)" if adds or dels else ""
        return Fact(Importance.MEDIUM if big else Importance.LOW,
                    f"格式、拼写或代码检查类改动{size_zh}，不改变行为"
                    + ("，但范围大，可能与未合入的分支冲突" if big else ""),
                    f"Formatting, spelling or lint change{size_en} with no behaviour change"
                    + ("; wide enough to conflict with open branches" if big else ""))
    if c.diff.dev_only_deps and not stats.source and not c.diff.release_edits:
        return Fact(Importance.LOW, "只改动了开发、测试或文档用的依赖，发布的包不受影响",
                    "Only development, test or docs dependencies change; what ships is unaffected")
    if c.profile.is_preview(tags=c.title.tags) or (stats.source and all(
            c.profile.is_preview(path=f.path) for f in stats.source)):
        return Fact(Importance.MEDIUM, "仅影响预览功能（按仓库配置），最多为中等重要性",
                    "Preview-only work (per the repository profile), so at most medium")
    return None


def _baseline(c: _Ctx) -> Fact:
    """The reason for a low level when no rule fired."""
    stats = c.stats
    if not stats.known and not stats.total_files:
        return Fact(Importance.LOW, f"未获取到改动文件，仅按标题判断为{_noun(c.ctype, True)}",
                    f"No file list available; judged from the title as a {_noun(c.ctype, False).lower()}")
    if c.title.preserving and stats.source_lines:
        return Fact(Importance.LOW, "作者说明行为不变的重构", "A refactor its author says changes no behaviour")
    if stats.source_lines:
        adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
        n = len(stats.source) if stats.known else stats.total_files
        return Fact(Importance.LOW, f"{_noun(c.ctype, True)}，源码改动小（{n} 个文件，{_lines(adds, dels)}）",
                    f"{_noun(c.ctype, False)} with a small source change ({_files_en(n)}, {_lines(adds, dels)})")
    if stats.of(FileKind.TOOLING):
        return _tooling_fact(stats, Importance.LOW)
    if stats.of(FileKind.DEPENDENCY):
        names = [f.path for f in stats.of(FileKind.DEPENDENCY)]
        return Fact(Importance.LOW, f"依赖清单改动（{_name_list(names, True, 2)}），没有主版本升级",
                    f"Dependency manifest change ({_name_list(names, False, 2)}) without a major version bump")
    if stats.of(FileKind.BUILD):
        names = [f.path for f in stats.of(FileKind.BUILD)]
        return Fact(Importance.LOW, f"构建或工具配置改动（{_name_list(names, True, 2)}），不改变发布产物的构建方式",
                    f"Build or tooling configuration ({_name_list(names, False, 2)}) that does not change how "
                    "shipped artefacts are built")
    n = stats.total_files
    return Fact(Importance.LOW, f"{_noun(c.ctype, True)}，未改动源码（{n} 个文件，均为配置或其他文件）",
                f"{_noun(c.ctype, False)} without source changes ({_files_en(n)}, config or other files)")


def decide_importance(c: _Ctx, zh: bool) -> tuple[Importance, str]:
    facts = (_breaking_facts(c) + _security_facts(c) + _removal_facts(c) + _behaviour_facts(c)
             + _size_facts(c))
    level = min((f.level for f in facts), key=lambda i: i.rank, default=Importance.LOW)
    cap = _cap(c)
    if cap is not None and not cap.floor and level.rank <= cap.level.rank:
        return cap.level, cap.text(zh)
    if cap is not None and cap.floor and cap.level.rank < level.rank:
        return cap.level, cap.text(zh)
    at_level = [f for f in facts if f.level is level]
    specific = [f for f in at_level if not f.size]
    decisive = (specific or at_level)[:2]  # size only speaks when nothing more specific does
    if not decisive:
        return Importance.LOW, _baseline(c).text(zh)
    texts = [f.text(zh) for f in decisive]
    if zh:
        return level, "；".join(texts)
    return level, "; ".join([texts[0]] + [_lower_first(t) for t in texts[1:]])


# =============================================================================================
# Texts: summary, impact, insights, risks, recommendations
# =============================================================================================

_BOILERPLATE = re.compile(
    r"^(#{1,6}\s|[-*]\s*\[[ xX]\]|<[^>]+>|[-=*_]{3,}$|\|"
    r"|(fix(es|ed)?|close[sd]?|resolve[sd]?|related( to)?|refs?|see|part of)\b[\s:]*(#\d+|https?://\S+|[\w.-]+/[\w.-]+#\d+)"

    r"|https?://\S+$|(purpose|test plan|test result|description|motivation|changes?|summary)\s*:?\s*$)",
    re.I)


_SHOUTING = re.compile(r"^[A-Z0-9 ,.'()/:;!?*-]{20,}$")  # template instructions in capitals


_REF_LINE = re.compile(r"^(fix(es|ed)?|close[sd]?|resolve[sd]?|related( to)?|refs?|see|part of)\b[\s:]*"
                       r"(#\d+|https?://\S+|[\w.-]+/[\w.-]+#\d+)[\s.,;]*$", re.I)


def _drop_line(line: str) -> bool:
    """Template boilerplate: headings, boxes, rules, tables, bare links and reference-only lines
    ('Fixes #12'); a line that goes on to say something ('Fixes #12 by …') is kept."""
    if _SHOUTING.match(line):
        return True
    if not _BOILERPLATE.match(line):
        return False
    if re.match(r"^(fix|close|resolve|related|ref|see|part of)", line, re.I):
        return bool(_REF_LINE.match(line))
    return True


def first_paragraphs(body: str, limit: int = 1500) -> str:
    """The opening paragraphs that say something (template boilerplate dropped), up to `limit`."""
    text = re.sub(r"<!--.*?-->", "", body or "", flags=re.S)
    text = re.sub(r"<details>.*?</details>", "", text, flags=re.S | re.I)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    kept: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in para.splitlines()]
        if kept and lines and re.match(r"^(#{1,6}\s|[A-Z][\w ]{2,30}\n?-{2,}$)", lines[0]) \
                and not re.match(r"^#{1,6}\s*(summary|description|motivation|purpose|what|why)\b", lines[0], re.I):
            break  # the next section (test plan, checklist …) is not the summary
        joined = " ".join(re.sub(r"^[-*•]\s+|^\d+[.)]\s+", "", ln) for ln in lines if ln and not _drop_line(ln))
        if joined:
            kept.append(joined)
        if sum(map(len, kept)) >= limit:
            break
    return "\n".join(kept)[:limit]


def first_paragraph(body: str) -> str:
    """The first paragraph of the message that says something (no template headings, boxes, links)."""
    text = re.sub(r"<!--.*?-->", "", body or "", flags=re.S)
    text = re.sub(r"<details>.*?</details>", "", text, flags=re.S | re.I)
    for para in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in para.splitlines()]
        kept = [re.sub(r"^[-*•]\s+", "", ln) for ln in lines
                if ln and not _BOILERPLATE.match(ln) and not _SHOUTING.match(ln)]
        joined = re.sub(r"\s+", " ", " ".join(kept)).strip()
        if len(re.findall(r"\w", joined)) >= 12:
            return joined
    return ""


def _first_sentence(text: str) -> str:
    sentences = split_sentences(text)
    return sentences[0] if sentences else ""


# --- whole sentences ---------------------------------------------------------------------------

_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|resp|no|fig)\.$", re.I)
_PR_URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:pull|issues)/(\d+)\S*")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)]+)\)")
_URL = re.compile(r"<?https?://\S+>?")
_REF_ONLY = re.compile(r"^(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|part of|follow[- ]up (to|of)|related( to)?"
                       r"|stacked on( top of)?|precursor to|port of)\b[\s:]*[#\w./-]*[.)]?$", re.I)


def _clean_prose(text: str) -> str:
    text = _MD_LINK.sub(r"\1", text)
    text = _PR_URL.sub(r"#\1", text)
    text = _URL.sub("", text)
    text = re.sub(r"\s+([,.;:])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph; an end is '.', '!' or '?' before a space (not after 'e.g.' or
    inside '0.16.4'), or a Chinese full stop."""
    text = _clean_prose(text)
    out: list[str] = []
    start = 0
    for m in re.finditer(r"[.!?](?=\s+[^\s])|[。！？]", text):
        piece = text[start:m.end()].strip()
        if m.group(0) == "." and _ABBREVIATIONS.search(piece):
            continue
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        # A sentence that introduced a code block ("… written as a string:") ends here.
        out.append(tail if re.search(r"[.!?。！？)]$", tail) else tail.rstrip(",;:") + ".")
    return [s for s in out if not _REF_ONLY.match(s)]


def whole_sentences(text: str, limit: int) -> str:
    """As many whole sentences as fit in `limit` characters ('' when not even the first fits):
    a summary is cut at a sentence boundary or not at all."""
    kept: list[str] = []
    size = 0
    for sentence in split_sentences(text):
        if size + len(sentence) + (1 if kept else 0) > limit:
            break
        kept.append(sentence)
        size += len(sentence) + (1 if kept else 0)
    return " ".join(kept)


# --- dependency updates ------------------------------------------------------------------------

_RENOVATE_ROW = re.compile(r"^\|\s*\[?(?P<name>[@\w./-]+)\]?(?:\([^)]*\))?\s*\|.*?`?v?(?P<old>\d[\w.+-]*)`?\s*"
                           r"(?:->|→)\s*`?v?(?P<new>\d[\w.+-]*)`?", re.M)
_DEPENDABOT_LINE = re.compile(r"\bBumps? \[?(?P<name>[@\w./-]+)\]?(?:\([^)]*\))? from (?P<old>\d[\w.+-]*) to "
                              r"(?P<new>\d[\w.+-]*?)\.?(?=\s|$)", re.I)
_LOCK_NAME = re.compile(r"""^\s*(?:name\s*=\s*"(?P<a>[^"]+)"|"(?:node_modules/)?(?P<b>[@\w./-]+)":\s*\{)""")
_LOCK_VERSION = re.compile(r"""^\s*"?version"?\s*[=:]\s*"(?P<v>[^"]+)"\s*,?$""")
_ACTION_PIN = re.compile(r"uses:\s*(?P<name>[\w.-]+/[\w./-]+)@\S+\s*#\s*v?(?P<v>\d[\w.]*)")
_TOOL_VERSION = re.compile(r"""^\s*(?:rev|version|node-version|python-version):\s*["']?v?(?P<v>\d[\w.]*)["']?(?:\s*#.*)?$""")
_FROZEN_REV = re.compile(r"#\s*frozen:\s*v?(?P<v>\d[\w.]*)")


def _lockfile_updates(f: FileChange) -> list[tuple[str, str, str]]:
    """(name, old, new) for each package whose version line changed in a lockfile hunk."""
    found: list[tuple[str, str, str]] = []
    name = ""
    old = ""
    for sign, text in _diff_lines(f.patch):
        if sign == "@":
            name, old = "", ""
            continue
        m = _LOCK_NAME.match(text)
        if m and sign != "-":
            name, old = (m.group("a") or m.group("b")), ""
            continue
        v = _LOCK_VERSION.match(text)
        if v and name:
            if sign == "-":
                old = v.group("v")
            elif sign == "+" and old and old != v.group("v"):
                found.append((name, old, v.group("v")))
                old = ""
    return found


def dependency_updates(commit: Commit, stats: "FileStats", title: "TitleInfo") -> list[tuple[str, str, str]]:
    """What a dependency update changes, from the bot's body, the title or the lockfile diff."""
    seen: dict[str, tuple[str, str, str]] = {}
    for m in list(_RENOVATE_ROW.finditer(commit.body)) + list(_DEPENDABOT_LINE.finditer(commit.body)):
        seen.setdefault(m.group("name").lower(), (m.group("name"), m.group("old"), m.group("new")))
    if title.bump and title.bump[1]:
        seen.setdefault(title.bump[0].lower(), title.bump)
    for f in stats.of(FileKind.LOCKFILE):
        for name, old, new in _lockfile_updates(f):
            seen.setdefault(name.lower(), (name, old, new))
    if not seen:
        for f in stats.of(FileKind.CI, FileKind.CONFIG, FileKind.DEPENDENCY, FileKind.BUILD):
            for minus, plus in _change_blocks(f.patch):
                for a, b in zip(minus, plus):
                    ma, mb = _ACTION_PIN.search(a), _ACTION_PIN.search(b)
                    if ma and mb and ma.group("name") == mb.group("name") and ma.group("v") != mb.group("v"):
                        seen.setdefault(ma.group("name").lower(), (ma.group("name"), ma.group("v"), mb.group("v")))
                        continue
                    ta, tb = _FROZEN_REV.search(a) or _TOOL_VERSION.match(a), _FROZEN_REV.search(b) or _TOOL_VERSION.match(b)
                    if ta and tb and ta.group("v") != tb.group("v") and title.subject:
                        key = title.bump[0] if title.bump else _dep_subject(title.subject)
                        if key:
                            seen.setdefault(key.lower(), (key, ta.group("v"), tb.group("v")))
    return list(seen.values())


def _dep_subject(subject: str) -> str:
    m = re.search(r"\b(?:update|bump|upgrade)\s+(?:dependency\s+|module\s+)?(?P<name>[@\w./-]+)", subject, re.I)
    return m.group("name") if m else ""


def _update_text(updates: list[tuple[str, str, str]], files: list[str], zh: bool) -> str:
    shown = [f"{n} {o} → {v}" for n, o, v in updates[:4]]
    more = len(updates) - len(shown)
    text = ", ".join(shown) + (f" (+{more})" if more > 0 else "")
    where = _name_list(files, zh, 2)
    return f"{text}（{where}）" if zh else f"{text} ({where})"


def _changelog_entries(stats: "FileStats") -> int:
    for f in stats.files:
        if f[0].path.rsplit("/", 1)[-1].lower().startswith(("changelog", "changes", "history", "news")):
            return sum(1 for sign, text in _diff_lines(f[0].patch) if sign == "+" and re.match(r"\s*[-*]\s+\S", text))
    return 0


def _new_version(stats: "FileStats") -> str:
    for f, _ in stats.files:
        for sign, text in _diff_lines(f.patch):
            m = re.match(r"""^\s*(?:version|VERSION)\s*[=:]\s*["']v?(\d+\.\d+[\w.+-]*)["']""", text)
            if sign == "+" and m:
                return m.group(1)
    return ""


def _where_names(c: "_Ctx", zh: bool) -> str:
    """'`solutions`, `PathBounds` in crates/…/constraints.rs' — what the hunks name, and where."""
    names = [f"`{n}`" for n in c.diff.hunk_names[:3]]
    source = tuple((f, k) for f, k in c.stats.files if k is FileKind.SOURCE)
    pool = FileStats(source, len(source), 0, 0, True) if source else c.stats
    where, _ = main_location(pool) if pool.files else ("", False)
    if names and where:
        return f"{where} 中的 {'、'.join(names)}" if zh else f"{', '.join(names)} in {where}"
    return where


def build_summary(c: "_Ctx", importance: Importance, zh: bool) -> str:
    """Whole sentences: the author's own (cut only at a sentence end), a dependency update as
    'name old → new (file)', a release as its version and changelog size, else what changed where."""
    if c.ctype is ChangeType.DEPENDENCIES or c.commit.author.lower().endswith("[bot]"):
        updates = dependency_updates(c.commit, c.stats, c.title)
        if updates:
            files = [f.path for f, k in c.stats.files if k in (FileKind.LOCKFILE, FileKind.DEPENDENCY, FileKind.CI,
                                                                FileKind.BUILD, FileKind.CONFIG)]
            if not files and c.stats.files:
                files = [c.stats.files[0][0].path]
            text = _update_text(updates, files, zh) if files else ", ".join(f"{n} {o} → {v}" for n, o, v in updates)
            return f"依赖更新：{text}。" if zh else f"{text}."
    if c.title.release:
        m = re.search(r"v?(\d+\.\d+[\w.+-]*)", c.title.subject)
        version = m.group(1) if m else _new_version(c.stats)
        entries = _changelog_entries(c.stats)
        if zh:
            return (f"发布 {version or '新版本'}" + (f"，更新日志新增 {entries} 条" if entries else "") + "。")
        return (f"Release {version or 'commit'}" + (f"; the changelog gains {entries} entries" if entries else "") + ".")
    limit = 200 if importance is Importance.LOW else 360
    para = first_paragraphs(c.commit.body, 1200)
    if importance is Importance.LOW:
        para = para.split("\n", 1)[0]  # one paragraph for a one-line entry
    text = whole_sentences(para.replace("\n", " "), limit) if para else ""
    if text and len(re.findall(r"\w+", text)) < 4:
        text = ""
    where = _where_names(c, zh)
    if c.ctype is ChangeType.REVERT and c.title.reverted_title:
        inner = _clean_prose(c.title.reverted_title).rstrip(".。")
        if zh:
            return f"回滚「{inner}」。" + (f"改动位于 {where}。" if where else "")
        return f"Reverts “{inner}”." + (f" Changes {where}." if where else "")
    if not text:
        subject = _clean_prose(c.title.subject).rstrip(".。") or c.commit.title
        if zh:
            return f"提交标题：「{subject}」。" + (f"改动位于 {where}。" if where else "")
        subject = subject[:1].upper() + subject[1:]
        return f"{subject}." + (f" Changes {where}." if where else "")
    if zh:
        return f"提交说明：「{text}」" + (f"改动位于 {where}。" if where and importance is not Importance.LOW else "")
    return text


# --- who is affected ---------------------------------------------------------------------------

_GROUP_DIRS = frozenset({"crates", "packages", "libs", "lib", "modules", "plugins", "apps", "components",
                         "services", "pkg", "cmd", "src"})
_SERVER_TOKENS = frozenset({"server", "lsp", "language_server", "languageserver"})
_NOT_AREAS = frozenset({"misc", "minor", "chore", "wip", "nfc", "trivial", "small", "core"})


def _component(path: str) -> str:
    parts = path.strip("/").split("/")
    if len(parts) >= 3 and parts[0] in _GROUP_DIRS:
        return parts[1]
    if len(parts) >= 2:
        return parts[0]
    return ""


def _audiences(c: "_Ctx", zh: bool) -> list[str]:
    d, t = c.diff, c.title
    out: list[str] = []

    def add(zh_text: str, en_text: str) -> None:
        text = zh_text if zh else en_text
        if text not in out:
            out.append(text)

    if d.release_edits:
        add(f"所有安装发布二进制或包的用户（{_name_list(list(d.release_edits), True, 2)}）",
            f"everyone installing the released binaries or packages ({_name_list(list(d.release_edits), False, 2)})")
    if d.removed_flags:
        add(f"传入 {_name_list(list(d.removed_flags), True, 2)} 的脚本", f"scripts passing {_name_list(list(d.removed_flags), False, 2)}")
    if d.removed_api:
        add(f"调用 {_name_list(list(d.removed_api), True, 2)} 的代码", f"code calling {_name_list(list(d.removed_api), False, 2)}")
    if d.default_changes:
        key = d.default_changes[0][1]
        add(f"未显式设置 {key} 的部署", f"deployments that leave {key} unset")
    labels = {"cli": ("命令行用户", "command-line users"), "settings": ("通过配置使用它的用户", "users who configure it"),
              "env": ("设置环境变量的用户", "users who set its environment variables"),
              "formats": ("读写其文件格式的工具", "tools that read or write its file formats"),
              "packages": ("导入其公开包的代码", "code importing its public packages")}
    for kind in d.surface_kinds:
        add(*labels[kind])
    if d.shipped_dep_changes:
        add(f"安装本项目的用户（依赖 {_name_list(list(d.shipped_dep_changes), True, 2)} 变化）",
            f"anyone installing it (dependency {_name_list(list(d.shipped_dep_changes), False, 2)} changes)")
    tags = [tag for tag in t.tags if _norm_tag(tag) not in TAG_TYPES and _norm_tag(tag) not in _NOT_AREAS]
    comps: list[str] = []
    for f in c.stats.source:
        if c.profile.is_internal(f.path):
            continue
        comp = _component(f.path).lstrip("_")
        if comp and comp not in comps:
            comps.append(comp)
    server = any(set(re.split(r"[/.]", f.path.lower())) & _SERVER_TOKENS
                 or re.search(r"(^|[/_-])(server|lsp)([/_.-]|$)", f.path.lower()) for f in c.stats.source)
    if server:
        who = tags[0] if tags else (comps[0] if comps else "")
        add(f"通过语言服务器使用 {who} 的编辑器用户" if who else "语言服务器的编辑器用户",
            f"editor users of the {who} language server" if who else "editor users of the language server")
    if tags:
        add(f"{tags[0]} 的用户" + (f"（{_name_list(comps, True, 2)}）" if comps else ""),
            f"users of {tags[0]}" + (f" ({_name_list(comps, False, 2)})" if comps else ""))
    elif comps:
        add(f"{_name_list(comps, True, 2)} 的使用者", f"users of {_name_list(comps, False, 2)}")
    if not out and c.stats.of(FileKind.CI):
        add("维护者（CI 与发布流水线）", "maintainers (CI and the release pipeline)")
    if not out and c.stats.of(FileKind.TOOLING, FileKind.TEST, FileKind.DOCS):
        add("贡献者（工具、测试或文档）", "contributors (tooling, tests or docs)")
    return out


def build_impact(c: "_Ctx", zh: bool, limit: int = 3) -> str:
    """Who is affected, in one sentence: users of X, operators of Y — not a file census."""
    who = _audiences(c, zh)[:limit]
    if not who:
        return ""
    if zh:
        return "影响：" + "；".join(who) + "。"
    text = ", ".join(who[:-1]) + (" and " if len(who) > 1 else "") + who[-1]
    return f"Affects {text}."


def _grouped_dirs(paths: Sequence[str]) -> list[tuple[str, int]]:
    dirs = Counter(p.rsplit("/", 1)[0] + "/" if "/" in p else "./" for p in paths)
    return dirs.most_common()


def build_insights(c: _Ctx, zh: bool) -> Insights:
    arch: list[str] = []
    added = c.stats.added_source
    if added:
        (where, n), *_ = _grouped_dirs([f.path for f in added])
        lines = sum(f.additions for f in added)
        arch.append(f"新增 {len(added)} 个源码文件（+{_num(lines)} 行），集中在 {where}" if zh
                    else f"Adds {_count_en(len(added), 'source file')} (+{_num(lines)} lines), mainly under {where}")
    removed = c.stats.removed_source
    if removed:
        (where, n), *_ = _grouped_dirs([f.path for f in removed])
        arch.append(f"删除了 {len(removed)} 个源码文件，其中 {n} 个在 {where}" if zh
                    else f"Deletes {_count_en(len(removed), 'source file')}, {n} of them under {where}")
    if c.diff.added_deps:
        arch.append(f"新增依赖 {_name_list(c.diff.added_deps, True)}" if zh
                    else f"New dependencies: {_name_list(c.diff.added_deps, False)}")
    if c.diff.removed_deps:
        arch.append(f"移除依赖 {_name_list(c.diff.removed_deps, True)}" if zh
                    else f"Dropped dependencies: {_name_list(c.diff.removed_deps, False)}")
    perf: list[str] = []
    if c.ctype is ChangeType.PERFORMANCE:
        adds, dels = c.stats.lines(FileKind.SOURCE)
        where, _ = main_location(c.stats) if c.stats.files else ("", False)
        perf.append(f"提交标记为性能优化，源码改动 {_lines(adds, dels)} 行，位于 {where}" if zh
                    else f"Marked as a performance change: {_lines(adds, dels)} source lines in {where}")
    if c.diff.gpu_kernels:
        perf.append(f"改动了 {len(c.diff.gpu_kernels)} 个 GPU 内核文件（{_name_list(c.diff.gpu_kernels, True, 2)}），"
                    "可能影响吞吐、延迟和显存" if zh
                    else f"Changes {_count_en(len(c.diff.gpu_kernels), 'GPU kernel file')} "
                    f"({_name_list(c.diff.gpu_kernels, False, 2)}), which can move throughput, latency and memory")
    sec: list[str] = []
    if c.title.cve:
        sec.append(f"提交提到 {c.title.cve}" if zh else f"The commit names {c.title.cve}")
    elif c.title.security:
        sec.append("提交说明提到安全问题" if zh else "The message mentions a security issue")
    if c.diff.security_paths:
        sec.append(f"改动触及安全敏感路径 {_name_list(c.diff.security_paths, True)}" if zh
                   else f"Touches security-sensitive paths: {_name_list(c.diff.security_paths, False)}")
    sep = "；" if zh else "; "
    return Insights(architecture=sep.join(arch), performance=sep.join(perf), security=sep.join(sec))


_PARSER_TOKENS = frozenset({"parser", "lexer", "grammar", "tokenizer", "parse"})
_OUTPUT_TOKENS = frozenset({"serializer", "serializers", "serialize", "serialization", "json_schema", "serde",
                            "serializer.rs", "serializers.py"})
_CONCURRENCY = re.compile(r"\b(race|races|racy|deadlock\w*|lock(s|ing)?|thread\w*|concurren\w*|async\w*|atomic\w*)\b", re.I)
_LIMIT_WORDS = re.compile(r"\b(limit\w*|budget\w*|bound(ed|s)?|cap(ped|s)?|threshold\w*|max(imum)?)\b", re.I)
_RECURSION_WORDS = re.compile(r"\b(recursi\w*|cycl(e|es|ic)|fixpoint|self-referential)\b", re.I)
_MESSAGE_WORDS = re.compile(r"\b(diagnostics?|error messages?|messages?|display|hover|signature help)\b", re.I)
_MEMORY_WORDS = re.compile(r"\b(gc|garbage|leak\w*|memory|refcount\w*|lifetimes?)\b", re.I)
_CHECK_WORDS = re.compile(r"\b(rule|lint|check)s?\b", re.I)
_PANIC_ABORT = re.compile(r"""panic\s*=\s*["']?abort""")


_INLINE_TEST = re.compile(r"^\+\s*(#\[(test|cfg\(test\)|tokio::test)|def test_|func Test|it\(|test\(|@Test)", re.M)


def _has_tests(c: "_Ctx") -> bool:
    """Tests changed: a test file, or tests written inside a source file (Rust `#[test]`)."""
    return bool(c.stats.of(FileKind.TEST)) or any(_INLINE_TEST.search(f.patch or "") for f in c.stats.source)


def _paths_with(c: "_Ctx", tokens: frozenset) -> list[str]:
    """Source paths with one of `tokens` as a whole directory or file-stem name."""
    return [f.path for f in c.stats.source if set(re.split(r"[/.]", f.path.lower())) & tokens
            and not c.profile.is_internal(f.path)]


def build_risks(c: "_Ctx", zh: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(risks, recommendations), paired rule by rule, most serious first. Each names the concrete
    thing that may break; the generic lines at the end speak only when nothing specific does."""
    risks: list[str] = []
    recs: list[str] = []

    def add(risk_zh: str, risk_en: str, rec_zh: str, rec_en: str) -> None:
        risks.append(risk_zh if zh else risk_en)
        recs.append(rec_zh if zh else rec_en)

    stats, diff, title = c.stats, c.diff, c.title
    names_zh, names_en = _where_names(c, True), _where_names(c, False)
    subject = f"“{_clip(title.subject, 80)}”"
    if title.breaking:
        add("提交声明了不兼容变更，升级后现有调用可能失败",
            "The commit declares a breaking change; existing callers may fail after upgrading",
            "升级前阅读提交说明中的迁移说明，并检查所有调用方",
            "Read the migration notes in the message and check every caller before upgrading")
    if title.security and c.ctype is ChangeType.REVERT:
        add("被回滚的是安全相关改动，它修复的问题可能重新出现",
            "The reverted change was security-related; the issue it fixed may be back",
            "确认是否有替代修复，没有时暂缓升级到包含此回滚的版本",
            "Check whether a replacement fix exists; until then hold back upgrades that contain this revert")
    elif title.security or c.ctype is ChangeType.SECURITY:
        cve = f"（{title.cve}）" if title.cve else ""
        cve_en = f" ({title.cve})" if title.cve else ""
        add(f"修复的安全问题{cve}在旧版本中仍然存在",
            f"The fixed security issue{cve_en} remains in older versions",
            "确认你运行的版本是否受影响，并尽快升级到包含此提交的版本",
            "Check whether your deployed version is affected and upgrade to one containing this commit")
    if title.rejects:
        add(f"以前被接受的输入现在会被拒绝（{title.rejects}）：{subject}；发送这类输入的调用方升级后会报错",
            f"Input that was accepted until now is refused ({title.rejects}): {subject}; callers sending it get "
            "an error after upgrading",
            "在升级前用真实输入（尤其是边界情况）验证一遍", "Run your real inputs, edge cases first, through the new version before upgrading")
    if title.guard and (title.guard_in_title or title.rejects) and not title.security:
        add(f"改动位于信任边界（{title.guard}）：这里的错误会悄悄削弱检查，而不是明显地报错",
            f"The change sits on a trust boundary ({title.guard}): a mistake here silently weakens a check "
            "instead of failing loudly",
            f"重点审查 {names_zh or '改动'} 对 {title.guard} 的处理", f"Review how {names_en or 'the change'} handles {title.guard}")
    removed = [f for f in stats.removed_source if f.path in diff.removed_surface_files]
    if removed:
        names = [f.path for f in sorted(removed, key=lambda f: -f.deletions)]
        add(f"删除了 {_name_list(names, True, 2)}，仍导入这些文件的下游代码会在导入时失败",
            f"Deleted {_name_list(names, False, 2)}; downstream code importing them fails at import time",
            "在你的代码中搜索对这些模块的导入，迁移到替代实现后再升级",
            "Search your code for imports of these modules and migrate before upgrading")
    if diff.removed_api:
        add(f"删除了公开接口 {_name_list(diff.removed_api, True)}，调用它们的代码会报错",
            f"Public definitions {_name_list(diff.removed_api, False)} were removed; code calling them will fail",
            f"搜索对 {_name_list(diff.removed_api, True)} 的调用并替换",
            f"Search for uses of {_name_list(diff.removed_api, False)} and replace them")
    if diff.moved_modules:
        old, new = diff.moved_modules[0]
        add(f"模块从 {old} 移到 {new}，按旧路径导入会失败",
            f"{old} moved to {new}; imports of the old path fail",
            "更新引用旧路径的导入语句", "Update imports that use the old path")
    if diff.removed_flags:
        add(f"命令行参数 {_name_list(diff.removed_flags, True)} 被移除，传入它们的脚本会报错",
            f"Removed command-line flags ({_name_list(diff.removed_flags, False)}) make scripts passing them fail",
            "检查启动脚本和部署配置中是否用到这些参数",
            "Check launch scripts and deployment configs for these flags")
    if c.ctype is ChangeType.REVERT:
        what = f"「{_clip(title.reverted_title, 60)}」" if title.reverted_title else ""
        what_en = f" (“{_clip(title.reverted_title, 60)}”)" if title.reverted_title else ""
        sha = f"（{c.commit.reverts[:7]}）" if c.commit.reverts else ""
        sha_en = f" ({c.commit.reverts[:7]})" if c.commit.reverts else ""
        add(f"被回滚的改动{what}{sha}不再生效，已依赖它的代码或配置会受影响",
            f"The reverted change{what_en}{sha_en} no longer applies; code or config relying on it is affected",
            "检查你是否已依赖被回滚的改动，并留意它之后是否会重新合入",
            "Check whether you already relied on the reverted change, and watch for it to be re-landed")
    if diff.default_changes:
        path, key, old, new = diff.default_changes[0]
        add(f"{path} 中 {key} 的默认值从 {old} 改为 {new}，未显式设置它的部署行为会改变",
            f"The default of {key} in {path} changed from {old} to {new}; deployments that do not set it behave differently",
            f"如果依赖旧行为，请显式设置 {key}={old}",
            f"If you rely on the old behaviour, set {key}={old} explicitly")
    elif title.default_change and c.ctype not in (ChangeType.DOCS, ChangeType.TESTS) and stats.source:
        add("默认行为发生变化，依赖默认值的部署会受影响",
            "A default behaviour changes; deployments relying on defaults are affected",
            "核对相关配置项，必要时显式设置为旧值",
            "Review the related settings and pin the old value explicitly if needed")
    for edit in diff.release_edits[:2]:
        if _PANIC_ABORT.search(edit):
            add(f"发布二进制改为 {edit}：panic 会直接终止进程，不再展开栈、执行清理或被 catch_unwind 捕获",
                f"Released binaries now build with {edit}: a panic ends the process at once, with no unwinding, "
                "no cleanup and no catch_unwind recovery",
                "确认没有代码依赖 catch_unwind 或 Drop 中的清理，并在发布前跑一遍崩溃路径",
                "Check nothing relies on catch_unwind or Drop-time cleanup, and exercise the crash paths before release")
        elif re.match(r"(rust-version|requires-python|python_requires|msrv)", edit, re.I):
            add(f"最低工具链要求变为 {edit}，用更旧的编译器或解释器从源码构建会失败",
                f"The minimum toolchain is now {edit}; building or installing from source with an older one fails",
                "检查打包和下游构建环境的工具链版本", "Check the toolchain versions of packagers and downstream builds")
        elif _DOCKER_FILE.match(edit.rsplit("/", 1)[-1].lower()):
            add(f"容器镜像的定义变了（{edit}），挂载或复制到旧路径、依赖旧层的部署可能失效",
                f"The container image definition changes ({edit}); deployments mounting into or copying from "
                "the old layout may break", "用新镜像在预发环境跑一遍部署", "Roll the new image through staging first")
        else:
            add(f"所有发布产物的构建方式都变了（{edit}），问题会在所有平台同时出现",
                f"Every released artefact is built differently ({edit}); a problem shows on every install at once",
                "在各目标平台上验证发布候选版本", "Verify a release candidate on each target platform")
    if diff.major_bumps:
        name, old, new = diff.major_bumps[0]
        span = f"{old} → {new}" if old else f"v{new}"
        add(f"{name} 升级主版本（{span}），可能带来不兼容的接口或行为",
            f"{name} moves to a new major version ({span}), which may change APIs or behaviour",
            f"阅读 {name} 的更新日志，在测试环境锁定新版本并跑完整测试后再升级",
            f"Read {name}'s changelog, pin the new version in a test environment and run the full suite first")
    elif diff.shipped_dep_changes and c.ctype is not ChangeType.REVERT and not title.release:
        deps = list(diff.shipped_dep_changes)
        add(f"发布版本依赖的 {_name_list(deps, True, 2)} 有变化，安装时会解析到不同的版本或特性",
            f"What ships depends on a changed {_name_list(deps, False, 2)}; installs resolve different versions or features",
            "重新生成锁文件并在各平台跑测试", "Regenerate lockfiles and run the tests on each platform")
    if title.crash and stats.source_lines:
        add(f"修复只覆盖报告的情形；走到 {names_zh} 的其他输入可能仍会崩溃",
            f"The fix covers the reported case; other inputs reaching {names_en} may still crash",
            "为相邻的输入形状补充回归测试", "Add regression tests for neighbouring input shapes")
    if title.pathology and stats.source_lines:
        if _LIMIT_WORDS.search(first_paragraphs(c.commit.body, 800)):
            add(f"{names_zh} 新增了上限：超过上限的输入会放弃或退回保守结果，而不是给出精确答案",
                f"{names_en} now has limits: inputs beyond them give up or fall back to a conservative result "
                "instead of an exact answer", "用你最大的真实输入确认结果没有退化",
                "Check your largest real inputs for degraded results")
        elif re.search(r"\bhang|never (terminat|finish)", f"{title.subject} {first_paragraphs(c.commit.body, 800)}", re.I):
            add(f"以前会卡住的输入现在能结束；如果 {names_zh} 的新剪枝条件有误，这些输入的结果可能不完整",
                f"Inputs that used to hang now finish; if the new cut-off in {names_en} is wrong, their results "
                "may be incomplete rather than slow", "用曾经卡住的真实输入确认结果完整",
                "Check that the inputs that used to hang now give complete results")
        else:
            add(f"{names_zh} 的新算法必须给出与原来完全相同的结果；若有偏差，表现为输出不同而不是报错",
                f"The new algorithm in {names_en} must give the same results as before; a divergence shows up as "
                "different output, not as an error", "对比升级前后在真实输入上的输出",
                "Compare outputs before and after on real inputs")
    if title.runtime_support:
        add(f"对 {title.runtime_support} 的支持是新的或有变化，相应的构建和 CI 可能尚不完整",
            f"Support for {title.runtime_support} is new or changed; wheels, builds or CI for it may be incomplete",
            f"在 {title.runtime_support} 上跑一遍你的测试", f"Run your test suite on {title.runtime_support}")
    parser = _paths_with(c, _PARSER_TOKENS)
    if parser and c.ctype in (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.OTHER, ChangeType.PERFORMANCE):
        add(f"解析器有改动（{_name_list(parser, True, 2)}）：以前能解析的代码可能被报告为语法错误，或反之",
            f"The parser changes ({_name_list(parser, False, 2)}): code that parsed before may now be reported "
            "as a syntax error, or the reverse", "在有代表性的代码库上对比解析结果",
            "Compare parse results on a representative code base")
    server = _paths_with(c, _SERVER_TOKENS)
    if server and c.ctype not in (ChangeType.REFACTOR, ChangeType.TESTS, ChangeType.DOCS):
        add(f"语言服务器的响应会变化（{_name_list(server, True, 2)}），编辑器插件可能看到不同的诊断或代码操作",
            f"Language server responses change ({_name_list(server, False, 2)}); editor clients may see different "
            "diagnostics or code actions", "在常用编辑器里试一遍相关操作", "Try the affected actions in the editors your team uses")
    output = _paths_with(c, _OUTPUT_TOKENS)
    behaviour = c.ctype in (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.OTHER)
    schema = [p for p in output if "schema" in p.lower()]
    if schema and not server and behaviour:
        add(f"生成的 JSON Schema 会变化（{_name_list(schema, True, 2)}），按旧 schema 校验或生成客户端的使用方会看到差异",
            f"Generated JSON Schema changes ({_name_list(schema, False, 2)}); clients validated against or "
            "generated from the old schema see differences", "对比升级前后导出的 schema",
            "Diff the exported schemas before and after upgrading")
    elif output and not server and behaviour:
        add(f"序列化结果可能变化（{_name_list(output, True, 2)}），存储或比较序列化输出的使用方会看到差异",
            f"Serialized output may change ({_name_list(output, False, 2)}); stored or compared dumps will differ",
            "对比关键类型升级前后的序列化输出", "Compare serialized output of your key types before and after")
    body_text = first_paragraphs(c.commit.body, 800)
    if behaviour and stats.source_lines and _RECURSION_WORDS.search(f"{title.subject} {body_text}"):
        add(f"{names_zh} 对递归或循环的处理变了：深层嵌套或自引用的输入可能得到不同的结果",
            f"Recursion handling in {names_en} changes: deeply nested or self-referential inputs may resolve "
            "differently", "用你代码里最深的递归结构验证一遍", "Check the most deeply recursive structures in your code")
    if behaviour and stats.source_lines and _MESSAGE_WORDS.search(title.subject):
        add("诊断或错误信息的文本会变化，匹配这些文本或快照的工具需要更新",
            "Diagnostic or error message text changes; tooling that matches on messages or snapshots needs updating",
            "更新依赖消息文本的脚本和快照", "Update scripts and snapshots that match on message text")
    if behaviour and stats.source_lines and re.search(r"\bfalse (positive|negative)s?\b", f"{title.subject} {body_text}", re.I):
        add("报告的问题会变化：误报消失后，为它们写的抑制注释会变成多余，修复也可能掩盖真实问题",
            "What gets reported changes: false positives go away, suppressions written for them become unused, "
            "and the fix may also hide true reports", "升级后清理多余的抑制注释，并留意漏报",
            "Clean up unused suppressions after upgrading and watch for missed reports")
    if stats.source_lines and _MEMORY_WORDS.search(f"{title.subject}"):
        add(f"{names_zh} 的内存管理有变化：对象的生命周期或回收时机可能不同",
            f"Memory management in {names_en} changes: object lifetimes or collection timing may differ",
            "在长时间运行的进程里观察内存", "Watch memory in a long-running process")
    if _CONCURRENCY.search(title.subject) and stats.source_lines:
        add(f"涉及并发（{names_zh}）：回归可能只在负载下出现", f"Concurrency is involved ({names_en}): a regression may only show under load",
            "在并发负载下跑测试", "Run the tests under concurrent load")
    if c.ctype is ChangeType.FEATURE and _CHECK_WORDS.search(title.subject) and stats.source_lines:
        add("新的检查可能在以前通过的代码上报告问题，启用它的项目会看到新的诊断",
            "The new check may report on code that passed before; projects that enable it see new diagnostics",
            "先在你的代码上试运行，再决定是否启用", "Dry-run it on your code before enabling it")
    if c.diff.gpu_kernels and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
        kernels = list(c.diff.gpu_kernels)
        add(f"GPU 内核改动（{_name_list(kernels, True, 2)}）可能只在部分硬件上改变数值或性能",
            f"GPU kernels change ({_name_list(kernels, False, 2)}); numerics or speed may move on some hardware only",
            "在目标 GPU 上对比精度和吞吐", "Compare accuracy and throughput on your target GPUs")
    if not risks and c.title.release:
        add("发布包含自上次发布以来的所有改动，其中的回归会一起到达用户",
            "The release carries every change since the last one; any regression among them reaches users at once",
            "先阅读更新日志中与你相关的条目", "Read the changelog entries that concern you before upgrading")
    specific = bool(risks)
    code_types = (ChangeType.FEATURE, ChangeType.BUGFIX, ChangeType.PERFORMANCE, ChangeType.REFACTOR,
                  ChangeType.OTHER, ChangeType.SECURITY)
    if not specific and stats.known and c.ctype in code_types and stats.source_lines >= 50 \
            and not _has_tests(c) and not removed:
        adds, dels = stats.lines(FileKind.SOURCE)
        add(f"改动了 {_lines(adds, dels)} 行源码（{names_zh}），却没有修改任何测试",
            f"{_lines(adds, dels)} source lines changed ({names_en}) without any test change",
            f"为 {names_zh} 补充测试，或在升级后重点验证这部分功能",
            f"Add tests for {names_en}, or verify that area closely after upgrading")
    if not risks and c.ctype is ChangeType.PERFORMANCE and stats.source_lines:
        add(f"性能改动（{names_zh}）可能只在特定负载或硬件上生效，甚至在其他场景下变慢",
            f"The performance change ({names_en}) may only help some workloads or hardware, and may slow others",
            "在你的负载上对比改动前后的吞吐和延迟",
            "Compare throughput and latency on your own workload before and after")
    if not risks and c.ctype is ChangeType.BUGFIX and stats.source_lines:
        add(f"依赖 {names_zh} 旧行为的调用方会得到不同的结果", f"Callers that relied on the old behaviour of {names_en} now get different results",
            "检查是否有代码依赖旧行为（包括绕过旧缺陷的写法）", "Look for code that relied on the old behaviour, including workarounds for the bug")
    if not risks and c.ctype is ChangeType.FEATURE and stats.source_lines:
        add(f"{names_zh} 是新代码，作者测试之外的边界情况尚未经过验证",
            f"{names_en} is new code; edge cases beyond the author's tests are unproven",
            "在非关键路径上先试用", "Try it on a non-critical path first")
    if not risks and c.ctype in (ChangeType.REFACTOR, ChangeType.OTHER) and stats.source_lines:
        add(f"{names_zh} 被重新组织，若行为有细微变化会影响所有调用方",
            f"{names_en} is restructured; a subtle behaviour change would reach every caller",
            "跑完整测试并关注该区域的回归", "Run the full suite and watch that area for regressions")
    if not risks and FileKind.CI in stats.kinds:
        ci = [f.path for f in stats.of(FileKind.CI)]
        add(f"流水线（{_name_list(ci, True, 2)}）有变化，发布或检查步骤可能失败或被跳过",
            f"The pipeline ({_name_list(ci, False, 2)}) changes; a release or check step may fail or be skipped",
            "观察下一次发布或 CI 运行", "Watch the next release or CI run")
    return tuple(risks[:5]), tuple(recs[:5])


# =============================================================================================
# Entry point
# =============================================================================================

def analyse_offline(commit: Commit, files: Sequence[FileChange], lang: str,
                    coverage: Coverage | None = None, origin: str = "offline", note: str = "",
                    profile: RepoProfile | None = None) -> Analysis:
    """Analyse one commit with rules only. Depth follows importance: a low commit gets its type,
    a one-line summary and the reason; medium and high ones also get impact, insights, risks and
    recommendations when a rule has something specific to say."""
    zh = _is_zh(lang)
    title = parse_title(commit.title, commit.body)
    stats = file_stats(commit, files)
    profile = profile or RepoProfile.inferred()
    ctx = _Ctx(commit, title, stats, diff_facts(stats, title, profile), decide_change_type(commit, title, stats),
               profile)
    importance, reason = decide_importance(ctx, zh)
    summary = build_summary(ctx, importance, zh)
    if importance is Importance.LOW:
        impact, insights, risks, recs = "", Insights(), (), ()
    else:
        impact = build_impact(ctx, zh)
        insights = build_insights(ctx, zh)
        risks, recs = build_risks(ctx, zh)
    return Analysis(
        change_type=ctx.ctype, importance=importance, importance_reason=reason, summary=summary,
        impact=impact, insights=insights, risks=risks, recommendations=recs,
        origin=origin, model="", note=note, coverage=coverage,
        files_changed=stats.total_files, additions=stats.additions, deletions=stats.deletions,
    )

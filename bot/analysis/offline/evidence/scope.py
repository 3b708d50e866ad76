"""Scope: what the change can reach. Ceilings for commits that cannot affect what users run (tests,
docs, CI, tooling, internal paths), for mechanical sweeps (formatting, typos, lint) and for
preview-only work; and the reason given for a low level when no rule fired."""

from __future__ import annotations

import re
from collections import Counter

from ....models import ChangeType, Importance
from ..context import Context, Fact
from ..lang import files_en, lines, name_list
from ..paths import NON_RUNTIME, FileKind
from ..stats import FileStats
from . import dependencies, security
from .size import noun

_COSMETIC = re.compile(
    r"\b(typos?|spelling|misspell\w*|formatting|reformat\w*|code format|lint(s|ing|er)?"
    r"|whitespace|ruff|flake8|pylint|eslint|prettier|isort|yapf|clang-format|mypy"
    r"|pre-commit|type hints?|type annotations?|type coverage|type check(ing|er)?|typing|code style)\b",
    re.I,
)
COSMETIC_BIG = 300  # a lint/format sweep this big (source lines) can still break open branches


def cosmetic(title_text: str) -> bool:
    return bool(_COSMETIC.search(title_text))


def _only_kinds_fact(stats: FileStats) -> Fact:
    """'仅改动文档（2 个文件）' / 'Docs-only change (2 files)'."""
    n = stats.total_files
    if stats.only({FileKind.LOCKFILE}):
        names = [f.path for f in stats.of(FileKind.LOCKFILE)]
        return Fact(
            Importance.LOW,
            f"仅更新锁文件（{name_list(names, True, 2)}），依赖声明未变",
            f"Lockfile-only update ({name_list(names, False, 2)}); declared dependencies unchanged",
        )
    counts = Counter(k for _, k in stats.files)
    kinds = [k for k, _ in counts.most_common()]
    zh = "、".join(k.label(True) for k in kinds)
    if zh[:1].isascii():
        zh = " " + zh  # "仅改动 CI 配置": a space between Chinese and Latin text
    if len(kinds) == 1:
        label = kinds[0].label(False)
        en = f"{label[:1].upper() + label[1:]}-only change ({files_en(n)}); no runtime code touched"
    else:
        en = (
            f"Only {', '.join(k.label(False) for k in kinds[:-1])} and {kinds[-1].label(False)} files "
            f"change ({files_en(n)}); no runtime code touched"
        )
    return Fact(Importance.LOW, f"仅改动{zh}（{n} 个文件），不影响运行时代码", en)


def _tooling_fact(stats: FileStats, level: Importance) -> Fact:
    adds, dels = stats.lines(FileKind.TOOLING)
    n = len(stats.of(FileKind.TOOLING))
    return Fact(
        level,
        f"只改动了基准、脚本等工具代码（{n} 个文件，{lines(adds, dels)}），不影响发布的代码",
        f"Only tooling such as benchmarks and scripts changes ({files_en(n)}, {lines(adds, dels)}); "
        "shipped code is untouched",
    )


def ceiling(c: Context) -> Fact | None:
    """A ceiling (or, with `floor`, a minimum): changes that cannot affect what users run, and
    mechanical sweeps. The first that applies decides."""
    stats = c.stats
    internal_only = (
        stats.known
        and stats.files
        and all(k in NON_RUNTIME | {FileKind.TOOLING} or c.profile.is_internal(f.path) for f, k in stats.files)
    )
    if internal_only and not c.diff.release_edits:
        # A security fix to CI workflows is real, and so is hardening the release pipeline; other
        # non-runtime commits are low whatever they claim.
        if security.exempts_ci(c):
            return None
        hardening = security.pipeline_hardening(c)
        if hardening:
            return hardening
        if stats.only(NON_RUNTIME):
            return _only_kinds_fact(stats)
        if stats.of(FileKind.TOOLING):
            return _tooling_fact(stats, Importance.LOW)
        return Fact(
            Importance.LOW,
            f"只改动了项目内部路径（{files_en(stats.total_files)}），不影响发布的代码",
            f"Only internal paths change ({files_en(stats.total_files)}); shipped code is untouched",
        )
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
        size_zh = f"（源码 {lines(adds, dels)} 行）" if adds or dels else ""
        size_en = f" ({lines(adds, dels)} source lines)" if adds or dels else ""
        return Fact(
            Importance.MEDIUM if big else Importance.LOW,
            f"格式、拼写或代码检查类改动{size_zh}，不改变行为" + ("，但范围大，可能与未合入的分支冲突" if big else ""),
            f"Formatting, spelling or lint change{size_en} with no behaviour change"
            + ("; wide enough to conflict with open branches" if big else ""),
        )
    dev_only = dependencies.dev_only(c)
    if dev_only:
        return dev_only
    if c.profile.is_preview(tags=c.title.tags) or (
        stats.source and all(c.profile.is_preview(path=f.path) for f in stats.source)
    ):
        return Fact(
            Importance.MEDIUM,
            "仅影响预览功能（按仓库配置），最多为中等重要性",
            "Preview-only work (per the repository profile), so at most medium",
        )
    return None


def baseline(c: Context) -> Fact:
    """The reason for a low level when no rule fired."""
    stats = c.stats
    if not stats.known and not stats.total_files:
        return Fact(
            Importance.LOW,
            f"未获取到改动文件，仅按标题判断为{noun(c.ctype, True)}",
            f"No file list available; judged from the title as a {noun(c.ctype, False).lower()}",
        )
    if c.title.preserving and stats.source_lines:
        return Fact(Importance.LOW, "作者说明行为不变的重构", "A refactor its author says changes no behaviour")
    if stats.source_lines:
        adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
        n = len(stats.source) if stats.known else stats.total_files
        return Fact(
            Importance.LOW,
            f"{noun(c.ctype, True)}，源码改动小（{n} 个文件，{lines(adds, dels)}）",
            f"{noun(c.ctype, False)} with a small source change ({files_en(n)}, {lines(adds, dels)})",
        )
    if stats.of(FileKind.TOOLING):
        return _tooling_fact(stats, Importance.LOW)
    if stats.of(FileKind.DEPENDENCY):
        names = [f.path for f in stats.of(FileKind.DEPENDENCY)]
        return Fact(
            Importance.LOW,
            f"依赖清单改动（{name_list(names, True, 2)}），没有主版本升级",
            f"Dependency manifest change ({name_list(names, False, 2)}) without a major version bump",
        )
    if stats.of(FileKind.BUILD):
        names = [f.path for f in stats.of(FileKind.BUILD)]
        return Fact(
            Importance.LOW,
            f"构建或工具配置改动（{name_list(names, True, 2)}），不改变发布产物的构建方式",
            f"Build or tooling configuration ({name_list(names, False, 2)}) that does not change how "
            "shipped artefacts are built",
        )
    n = stats.total_files
    return Fact(
        Importance.LOW,
        f"{noun(c.ctype, True)}，未改动源码（{n} 个文件，均为配置或其他文件）",
        f"{noun(c.ctype, False)} without source changes ({files_en(n)}, config or other files)",
    )

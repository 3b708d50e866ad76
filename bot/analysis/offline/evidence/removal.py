"""Removals: deleted public source files, public definitions and command-line flags that are gone,
modules moved away from their import path, and functionality removed or deprecated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....models import ChangeType, Importance
from ..context import Context, Fact, Insight, Risk
from ..lang import count_en, name_list, num
from ..paths import FileKind, extension
from ..stats import grouped_dirs

if TYPE_CHECKING:
    from ...profile import RepoProfile
    from ..patch import SourceScan
    from ..stats import FileStats

_IMPORT_PATH_EXT = frozenset({"py", "go", "ts", "tsx", "js", "jsx", "mjs", "rs"})


# --- reading the files ---------------------------------------------------------------------------


def removed_api(scan: SourceScan) -> tuple[list[str], bool]:
    """(public definitions deleted and not re-added anywhere, whether any was in a deleted file)."""
    names = sorted(n for n in scan.removed_defs if n not in scan.added_defs)
    return names, any(scan.removed_defs[n] for n in names)


def removed_flags(scan: SourceScan) -> list[str]:
    return sorted(scan.flags_removed - scan.flags_added)


def moved_modules(stats: FileStats, profile: RepoProfile) -> list[tuple[str, str]]:
    """(old path, new path) of public importable source files that were renamed."""
    return [
        (f.previous_path, f.path)
        for f in stats.source
        if f.status == "renamed"
        and f.previous_path
        and f.previous_path != f.path
        and extension(f.path) in _IMPORT_PATH_EXT
        and profile.is_public(f.previous_path)
    ]


def removed_surface_files(stats: FileStats, profile: RepoProfile) -> list[str]:
    return [f.path for f in stats.removed_source if profile.is_public(f.path)]


def _removed_files(c: Context):
    return [f for f in c.stats.removed_source if f.path in c.diff.removed_surface_files]


# --- conclusions ---------------------------------------------------------------------------------


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    removed = _removed_files(c)
    gone = sum(f.deletions for f in removed)
    if removed:
        n = len(removed)
        level = Importance.HIGH if n >= 5 or gone >= 300 else Importance.MEDIUM
        if c.diff.removed_api_in_removed_files:
            facts.append(
                Fact(
                    level,
                    f"移除了 {n} 个公开源码文件中的公开 API（−{num(gone)} 行），依赖它的下游会失效",
                    f"Removes public API in {count_en(n, 'source file')} "
                    f"(−{num(gone)} lines); downstream code that uses it will break",
                    order=30,
                )
            )
        else:
            facts.append(
                Fact(
                    level,
                    f"删除了 {n} 个公开源码文件（−{num(gone)} 行），仍导入它们的代码会失效",
                    f"Deletes {count_en(n, 'public source file')} (−{num(gone)} lines); "
                    "code that still imports them will break",
                    order=30,
                )
            )
    api = c.diff.removed_api
    if api and not c.diff.removed_api_in_removed_files:
        level = Importance.HIGH if len(api) >= 5 else Importance.MEDIUM
        facts.append(
            Fact(
                level,
                f"删除了公开接口 {name_list(api, True)}，调用方需要迁移",
                f"Removes public definitions {name_list(api, False)}; callers must migrate",
                order=31,
            )
        )
    if c.diff.removed_flags:
        flags = c.diff.removed_flags
        facts.append(
            Fact(
                Importance.HIGH,
                f"移除了命令行参数 {name_list(flags, True)}，使用它们的脚本会报错",
                f"Removes command-line {'flag' if len(flags) == 1 else 'flags'} {name_list(flags, False)}; "
                "scripts passing them will fail",
                order=32,
            )
        )
    if c.ctype is ChangeType.REMOVAL and not removed and not api and c.stats.source_lines and not c.title.preserving:
        deleted = c.stats.lines(FileKind.SOURCE)[1] if c.stats.known else c.stats.deletions
        if deleted >= 20:
            facts.append(
                Fact(
                    Importance.MEDIUM,
                    f"移除或弃用了功能（源码 −{num(deleted)} 行），使用者需要迁移",
                    f"Removes or deprecates functionality (−{num(deleted)} source lines); users must migrate",
                    order=33,
                )
            )
    if c.diff.moved_modules:
        moved = [old for old, _ in c.diff.moved_modules]
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"移动了 {len(moved)} 个模块（{name_list(moved, True, 2)}），按旧路径导入会失效",
                f"Moves {count_en(len(moved), 'module')} ({name_list(moved, False, 2)}); "
                "imports of the old paths break",
                order=34,
            )
        )
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []
    diff = c.diff
    removed = _removed_files(c)
    if removed:
        names = [f.path for f in sorted(removed, key=lambda f: -f.deletions)]
        out.append(
            Risk(
                30,
                f"删除了 {name_list(names, True, 2)}，仍导入这些文件的下游代码会在导入时失败",
                f"Deleted {name_list(names, False, 2)}; downstream code importing them fails at import time",
                "在你的代码中搜索对这些模块的导入，迁移到替代实现后再升级",
                "Search your code for imports of these modules and migrate before upgrading",
            )
        )
    if diff.removed_api:
        out.append(
            Risk(
                31,
                f"删除了公开接口 {name_list(diff.removed_api, True)}，调用它们的代码会报错",
                f"Public definitions {name_list(diff.removed_api, False)} were removed; code calling them will fail",
                f"搜索对 {name_list(diff.removed_api, True)} 的调用并替换",
                f"Search for uses of {name_list(diff.removed_api, False)} and replace them",
            )
        )
    if diff.moved_modules:
        old, new = diff.moved_modules[0]
        out.append(
            Risk(
                32,
                f"模块从 {old} 移到 {new}，按旧路径导入会失败",
                f"{old} moved to {new}; imports of the old path fail",
                "更新引用旧路径的导入语句",
                "Update imports that use the old path",
            )
        )
    if diff.removed_flags:
        out.append(
            Risk(
                33,
                f"命令行参数 {name_list(diff.removed_flags, True)} 被移除，传入它们的脚本会报错",
                f"Removed command-line flags ({name_list(diff.removed_flags, False)}) make scripts passing them fail",
                "检查启动脚本和部署配置中是否用到这些参数",
                "Check launch scripts and deployment configs for these flags",
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    removed = c.stats.removed_source
    if not removed:
        return []
    (where, n), *_ = grouped_dirs([f.path for f in removed])
    return [
        Insight(
            "architecture",
            20,
            f"删除了 {len(removed)} 个源码文件，其中 {n} 个在 {where}",
            f"Deletes {count_en(len(removed), 'source file')}, {n} of them under {where}",
        )
    ]

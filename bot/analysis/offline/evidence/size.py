"""Size: how much source code changes, measured on source only (tests, docs, lockfiles, generated
and internal files never make a commit look important), and the generic risks that speak only
when no specific rule does."""

from __future__ import annotations

import re

from ....models import ChangeType, Importance
from ..context import Context, Fact, Insight, Risk
from ..lang import count_en, files_en, lines, num
from ..paths import FileKind
from ..stats import grouped_dirs, main_location, where_names

# Changed lines of source code at which a commit is medium, per type: a feature grows the product
# faster per line than a refactor moves it. Size alone never makes a commit high: a maintainer
# calls a commit high for what it does (breaks, secures, ships differently), and a 2,000-line
# internal feature is still one team's business.
SIZE_THRESHOLDS: dict[ChangeType, int] = {
    ChangeType.FEATURE: 40,
    ChangeType.PERFORMANCE: 20,
    ChangeType.BUGFIX: 300,
    ChangeType.REFACTOR: 600,
}
DEFAULT_THRESHOLD = 200
WIDE_SOURCE_FILES = 20  # this many source files is medium whatever the line count (not for refactors)

_TYPE_NOUNS = {
    ChangeType.FEATURE: ("新功能", "Feature"),
    ChangeType.BUGFIX: ("缺陷修复", "Bug fix"),
    ChangeType.PERFORMANCE: ("性能优化", "Performance change"),
    ChangeType.REFACTOR: ("重构", "Refactor"),
    ChangeType.DOCS: ("文档改动", "Docs change"),
    ChangeType.TESTS: ("测试改动", "Test change"),
    ChangeType.CI_BUILD: ("CI/构建改动", "CI/build change"),
    ChangeType.DEPENDENCIES: ("依赖更新", "Dependency update"),
    ChangeType.CONFIG: ("配置改动", "Config change"),
    ChangeType.REVERT: ("回滚", "Revert"),
    ChangeType.REMOVAL: ("移除/弃用", "Removal/deprecation"),
    ChangeType.SECURITY: ("安全修复", "Security fix"),
    ChangeType.OTHER: ("其他改动", "Change"),
}
_INLINE_TEST = re.compile(r"^\+\s*(#\[(test|cfg\(test\)|tokio::test)|def test_|func Test|it\(|test\(|@Test)", re.M)
_CODE_TYPES = (
    ChangeType.FEATURE,
    ChangeType.BUGFIX,
    ChangeType.PERFORMANCE,
    ChangeType.REFACTOR,
    ChangeType.OTHER,
    ChangeType.SECURITY,
)


def noun(ctype: ChangeType, zh: bool) -> str:
    return _TYPE_NOUNS[ctype][0 if zh else 1]


def _has_tests(c: Context) -> bool:
    """Tests changed: a test file, or tests written inside a source file (Rust `#[test]`)."""
    return bool(c.stats.of(FileKind.TEST)) or any(_INLINE_TEST.search(f.patch or "") for f in c.stats.source)


def facts(c: Context) -> list[Fact]:
    stats = c.stats
    if c.title.preserving or (stats.known and not stats.source):
        return []  # "no behaviour change" by the author's word; tooling-only is capped elsewhere
    n_lines = stats.source_lines
    n_files = len(stats.source)
    adds, dels = stats.lines(FileKind.SOURCE) if stats.known else (stats.additions, stats.deletions)
    if stats.known:
        internal = [f for f in stats.source if c.profile.is_internal(f.path)]
        n_lines -= sum(f.changes for f in internal)
        n_files -= len(internal)
    if n_lines <= 0:
        return []
    medium_at = SIZE_THRESHOLDS.get(c.ctype, DEFAULT_THRESHOLD)
    noun_zh, noun_en = noun(c.ctype, True), noun(c.ctype, False)
    where_zh = f"{n_files} 个文件" if stats.known else "未获取到文件明细"
    where_en = files_en(n_files) if stats.known else "file list unavailable"
    if n_lines >= medium_at:
        return [
            Fact(
                Importance.MEDIUM,
                f"{noun_zh}，源码改动 {lines(adds, dels)} 行（{where_zh}）",
                f"{noun_en} touching {lines(adds, dels)} lines of source ({where_en})",
                order=50,
                size=True,
            )
        ]
    if stats.known and n_files >= WIDE_SOURCE_FILES and c.ctype is not ChangeType.REFACTOR:
        return [
            Fact(
                Importance.MEDIUM,
                f"{noun_zh}，改动分布在 {n_files} 个源码文件中",
                f"{noun_en} spread over {n_files} source files",
                order=50,
                size=True,
            )
        ]
    return []


def risks(c: Context) -> list[Risk]:
    """The generic risks, each a fallback: shown only when nothing more specific applies."""
    out: list[Risk] = []
    stats = c.stats
    if not stats.source_lines:
        return out
    names_zh, names_en = where_names(stats, c.diff.hunk_names, True), where_names(stats, c.diff.hunk_names, False)

    def add(order: int, risk_zh: str, risk_en: str, rec_zh: str, rec_en: str) -> None:
        out.append(Risk(order, risk_zh, risk_en, rec_zh, rec_en, fallback=True))

    removed = [f for f in stats.removed_source if f.path in c.diff.removed_surface_files]
    if stats.known and c.ctype in _CODE_TYPES and stats.source_lines >= 50 and not _has_tests(c) and not removed:
        adds, dels = stats.lines(FileKind.SOURCE)
        add(
            61,
            f"改动了 {lines(adds, dels)} 行源码（{names_zh}），却没有修改任何测试",
            f"{lines(adds, dels)} source lines changed ({names_en}) without any test change",
            f"为 {names_zh} 补充测试，或在升级后重点验证这部分功能",
            f"Add tests for {names_en}, or verify that area closely after upgrading",
        )
    if c.ctype is ChangeType.PERFORMANCE:
        add(
            62,
            f"性能改动（{names_zh}）可能只在特定负载或硬件上生效，甚至在其他场景下变慢",
            f"The performance change ({names_en}) may only help some workloads or hardware, and may slow others",
            "在你的负载上对比改动前后的吞吐和延迟",
            "Compare throughput and latency on your own workload before and after",
        )
    if c.ctype is ChangeType.BUGFIX:
        add(
            63,
            f"依赖 {names_zh} 旧行为的调用方会得到不同的结果",
            f"Callers that relied on the old behaviour of {names_en} now get different results",
            "检查是否有代码依赖旧行为（包括绕过旧缺陷的写法）",
            "Look for code that relied on the old behaviour, including workarounds for the bug",
        )
    if c.ctype is ChangeType.FEATURE:
        add(
            64,
            f"{names_zh} 是新代码，作者测试之外的边界情况尚未经过验证",
            f"{names_en} is new code; edge cases beyond the author's tests are unproven",
            "在非关键路径上先试用",
            "Try it on a non-critical path first",
        )
    if c.ctype in (ChangeType.REFACTOR, ChangeType.OTHER):
        add(
            65,
            f"{names_zh} 被重新组织，若行为有细微变化会影响所有调用方",
            f"{names_en} is restructured; a subtle behaviour change would reach every caller",
            "跑完整测试并关注该区域的回归",
            "Run the full suite and watch that area for regressions",
        )
    return out


def insights(c: Context) -> list[Insight]:
    out: list[Insight] = []
    added = c.stats.added_source
    if added:
        (where, _), *_ = grouped_dirs([f.path for f in added])
        n_lines = sum(f.additions for f in added)
        out.append(
            Insight(
                "architecture",
                10,
                f"新增 {len(added)} 个源码文件（+{num(n_lines)} 行），集中在 {where}",
                f"Adds {count_en(len(added), 'source file')} (+{num(n_lines)} lines), mainly under {where}",
            )
        )
    if c.ctype is ChangeType.PERFORMANCE:
        adds, dels = c.stats.lines(FileKind.SOURCE)
        where, _ = main_location(c.stats) if c.stats.files else ("", False)
        out.append(
            Insight(
                "performance",
                10,
                f"提交标记为性能优化，源码改动 {lines(adds, dels)} 行，位于 {where}",
                f"Marked as a performance change: {lines(adds, dels)} source lines in {where}",
            )
        )
    return out

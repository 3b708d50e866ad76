"""Synthetic digests for the report page's tests and its benchmark: `day(n)` is a day of n
commits in the three importance levels with full analyses (insights, risks, coverage …), in
either language, with whatever titles the caller wants to try (hostile ones included)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from bot.core.models import Analysis, ChangeType, Commit, Coverage, Digest, DigestEntry, Importance, Insights
from bot.core.window import day_window

LEVELS = (Importance.HIGH, Importance.MEDIUM, Importance.LOW, Importance.LOW, Importance.MEDIUM)


def entry(
    i: int, title: str, importance: Importance, *, lang: str = "en", repo_url: str | None = None, when: datetime
) -> DigestEntry:
    sha = hashlib.sha1(f"commit {i}".encode()).hexdigest()
    commit = Commit(
        repo="acme/widgets",
        sha=sha,
        title=title,
        body=f"Body of commit {i}.",
        author=f"Dev {i % 17}",
        committed_at=when,
        url=f"{repo_url}/commit/{sha}" if repo_url else None,
        pr_number=1000 + i if i % 3 == 0 else None,
    )
    zh = lang == "zh"
    analysis = Analysis(
        change_type=ChangeType.FEATURE if i % 2 else ChangeType.BUGFIX,
        importance=importance,
        importance_reason=(
            "改动了公共 API `export()` 的签名" if zh else f"changes the public `export()` signature ({i})"
        ),
        summary=(
            "新增 `--since` 参数；**默认行为不变**。\n第二行说明。"
            if zh
            else f"Adds a `--since` flag to the exporter; **default behaviour unchanged** (commit {i}).\n"
            "A second line of detail."
        ),
        impact="导出路径上的所有调用方。" if zh else "Every caller of the export path.",
        insights=Insights(
            architecture="新的参数穿过三层。" if zh else "The flag crosses three layers.",
            performance="" if i % 2 else "One more index scan per export.",
            security="输入未校验。" if zh else "Input is not validated.",
        ),
        risks=("旧脚本可能失败。" if zh else "Old scripts may break.", "Long-running exports."),
        recommendations=("在发布说明中提及。" if zh else "Mention it in the release notes.",),
        origin="llm",
        model="test-model",
        coverage=Coverage(
            files_total=4, files_shown=3, partial=("src/big.py",), omitted=(("vendor/lib.min.js", "generated"),)
        ),
    )
    return DigestEntry(commit=commit, analysis=analysis)


def day(
    n: int,
    *,
    lang: str = "en",
    titles: dict[int, str] | None = None,
    repo: str = "acme/widgets",
    repo_url: str | None = "https://github.com/acme/widgets",
    notices: tuple[str, ...] = (),
) -> Digest:
    window = day_window(datetime(2026, 1, 28).date(), "Asia/Shanghai")
    start = window.start_utc
    titles = titles or {}
    entries = []
    for i in range(n):
        when = start + timedelta(seconds=(n - i) * (86000 // max(n, 1)))  # newest first
        title = titles.get(i, f"feat(export): add the --since flag, part {i}")
        entries.append(entry(i, title, LEVELS[i % len(LEVELS)], lang=lang, repo_url=repo_url, when=when))
    headline = (
        ("今天的重点：导出 API 变了。", "缓存修复。")
        if lang == "zh"
        else ("The export API changed: `export()` takes **since**.", "A cache fix landed.")
    )
    return Digest(
        repo=repo,
        branch="main",
        window=window,
        lang=lang,
        entries=tuple(entries),
        headline=headline,
        headline_origin="llm",
        repo_url=repo_url,
        generated_at=datetime(2026, 1, 29, 1, 0, tzinfo=UTC),
        repo_spec=repo,
        notices=notices,
    )

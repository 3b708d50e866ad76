"""The words every renderer shares, in zh and en, so Markdown, Slack and Feishu say the same thing."""
from __future__ import annotations

from ..models import Analysis, Digest, Importance

LABELS: dict[str, dict[str, str]] = {
    "zh": {
        "title_day": "每日更新报告（{label}）",
        "title_range": "更新报告（{label}）",
        "col_time": "提交时间", "col_author": "作者", "col_message": "提交信息",
        "stats_heading": "📊 统计摘要",
        "stats_day": "本日共 {n} 个提交 | 🔴 高 {high} | 🟡 中 {medium} | 🟢 低 {low}",
        "stats_range": "共 {n} 个提交 | 🔴 高 {high} | 🟡 中 {medium} | 🟢 低 {low}",
        "toc_heading": "📋 目录",
        "commits_heading": "🗂 提交列表",
        "headline_heading": "📌 今日要点",
        "group_high": "🔴 高重要度变更 ({n})", "group_medium": "🟡 中重要度变更 ({n})",
        "group_low": "🟢 低重要度变更 ({n})",
        "imp_high": "🔴 高", "imp_medium": "🟡 中", "imp_low": "🟢 低",
        "type": "🎯 变更类型", "importance": "⚡ 重要程度", "summary": "📋 变更摘要",
        "impact": "🧭 影响范围", "insights": "🔍 技术洞察", "architecture": "架构",
        "performance": "性能", "security": "安全", "risks": "⚠️ 潜在风险",
        "recommendations": "💡 关注建议", "coverage": "📁 覆盖",
        "view_commit": "查看提交", "author": "作者", "pr": "PR",
        "reverts": "↩️ 回滚了 {sha}",
        "origin_offline": "ℹ️ 规则分析（未配置 LLM）",
        "origin_fallback": "⚠️ LLM 分析失败，以下为规则分析：{note}",
        "unanalysed": "⚠️ 未能分析此提交：{reason}",
        "empty": "{repo} 在 {label}（{tz}）没有新的提交。",
        "meta": "分支 {branch} · 时区 {tz} · {n} 个提交",
        "low_grouped": "🟢 低重要度变更 ({n})",
        "and_more": "另有 {n} 项",
        "headline_offline": "（规则生成）",
        "choose": "你问的是哪个提交？",
    },
    "en": {
        "title_day": "Daily update report ({label})",
        "title_range": "Update report ({label})",
        "col_time": "Committed", "col_author": "Author", "col_message": "Commit",
        "stats_heading": "📊 Stats",
        "stats_day": "{n} commits today | 🔴 high {high} | 🟡 medium {medium} | 🟢 low {low}",
        "stats_range": "{n} commits | 🔴 high {high} | 🟡 medium {medium} | 🟢 low {low}",
        "toc_heading": "📋 Contents",
        "commits_heading": "🗂 Commits",
        "headline_heading": "📌 Headlines",
        "group_high": "🔴 High importance ({n})", "group_medium": "🟡 Medium importance ({n})",
        "group_low": "🟢 Low importance ({n})",
        "imp_high": "🔴 High", "imp_medium": "🟡 Medium", "imp_low": "🟢 Low",
        "type": "🎯 Change type", "importance": "⚡ Importance", "summary": "📋 Summary",
        "impact": "🧭 Impact", "insights": "🔍 Technical insight", "architecture": "Architecture",
        "performance": "Performance", "security": "Security", "risks": "⚠️ Risks",
        "recommendations": "💡 Recommendations", "coverage": "📁 Coverage",
        "view_commit": "View commit", "author": "Author", "pr": "PR",
        "reverts": "↩️ Reverts {sha}",
        "origin_offline": "ℹ️ Rule-based analysis (no LLM configured)",
        "origin_fallback": "⚠️ The LLM analysis failed; rule-based analysis instead: {note}",
        "unanalysed": "⚠️ This commit could not be analysed: {reason}",
        "empty": "No new commits in {repo} on {label} ({tz}).",
        "meta": "branch {branch} · time zone {tz} · {n} commits",
        "low_grouped": "🟢 Low importance ({n})",
        "and_more": "{n} more",
        "headline_offline": "(rule-based)",
        "choose": "Which commit do you mean?",
    },
}


def t(lang: str, key: str, /, **values) -> str:
    table = LABELS.get(lang, LABELS["en"])
    return table[key].format(**values)


def colon(lang: str) -> str:
    return "：" if lang == "zh" else ": "


def title(digest: Digest) -> str:
    key = "title_range" if ".." in digest.window.label else "title_day"
    return t(digest.lang, key, label=digest.window.label)


def stats_line(digest: Digest) -> str:
    key = "stats_range" if ".." in digest.window.label else "stats_day"
    return t(digest.lang, key, n=len(digest.entries), high=digest.count(Importance.HIGH),
             medium=digest.count(Importance.MEDIUM), low=digest.count(Importance.LOW))


def importance_label(lang: str, importance: Importance) -> str:
    return t(lang, f"imp_{importance.value}")


def group_label(lang: str, importance: Importance, n: int) -> str:
    return t(lang, f"group_{importance.value}", n=n)


def origin_note(lang: str, analysis: Analysis) -> str:
    """What the reader must know about where an analysis came from ('' for a normal LLM one)."""
    if analysis.origin == "offline":
        return t(lang, "origin_offline")
    if analysis.origin == "fallback":
        return t(lang, "origin_fallback", note=analysis.note or "?")
    return ""

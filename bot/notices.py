"""What went wrong while building a digest, said out loud: the sentences shown at the top of the
digest (in its language) and the CLI's one-line summary on stderr.

Fallback analyses carry a reason code (`Analysis.fallback_reason`); these functions count them.
"""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from typing import Sequence
from zoneinfo import ZoneInfo

from .models import DigestEntry

LLM_REASONS = ("timeout", "unreachable", "http_error", "context", "rejected")
SOURCE_REASONS = ("rate_limited", "source")

REASON_TEXT = {
    "en": {"timeout": "the LLM request timed out", "unreachable": "the LLM endpoint could not be reached",
           "http_error": "the LLM endpoint answered with errors",
           "context": "the commit did not fit the model's context window",
           "rejected": "the LLM's answers failed the checks", "other": "other errors"},
    "zh": {"timeout": "LLM 请求超时", "unreachable": "无法连接 LLM 服务", "http_error": "LLM 服务返回错误",
           "context": "提交内容超出模型的上下文窗口", "rejected": "LLM 的回答未通过校验", "other": "其他错误"},
}
LLM_NOTICE = {
    "en": "⚠️ The LLM could not analyse {failed} of {total} commits ({why}); those show the offline analysis.",
    "zh": "⚠️ LLM 未能分析 {total} 个提交中的 {failed} 个（{why}），这些提交显示的是离线分析。",
}
RATE_LIMIT_NOTICE = {
    "en": ("⚠️ GitHub's API rate limit ran out: the changes of {failed} of {total} commits could not be "
           "read, so their ratings rest on the commit message alone. Try again after {when}."),
    "zh": ("⚠️ GitHub API 调用额度已用完：{total} 个提交中有 {failed} 个未能读取改动内容，"
           "其评级仅依据提交说明。请在 {when} 之后重试。"),
}
SOURCE_NOTICE = {
    "en": "⚠️ The changes of {failed} of {total} commits could not be read ({why}).",
    "zh": "⚠️ {total} 个提交中有 {failed} 个未能读取改动内容（{why}）。",
}
SOON = {"en": "a few minutes", "zh": "几分钟"}
CLI_REASON = {"timeout": "timed out after {timeout:g} s", "unreachable": "endpoint unreachable",
              "http_error": "endpoint errors", "context": "did not fit the context window",
              "rejected": "answers rejected"}


def _lang(lang: str) -> str:
    return "zh" if lang == "zh" else "en"


def _reasons(entries: Sequence[DigestEntry], codes: Sequence[str]) -> Counter:
    return Counter(e.analysis.fallback_reason for e in entries
                   if e.analysis and e.analysis.origin == "fallback" and e.analysis.fallback_reason in codes)


def llm_notice(entries: Sequence[DigestEntry], lang: str) -> str | None:
    """How many commits the LLM could not analyse and why (most frequent reason first)."""
    reasons = _reasons(entries, LLM_REASONS)
    if not reasons:
        return None
    lang = _lang(lang)
    sep = "；" if lang == "zh" else "; "
    why = sep.join(f"{REASON_TEXT[lang][code]}: {n}" if len(reasons) > 1 else REASON_TEXT[lang][code]
                   for code, n in reasons.most_common())
    return LLM_NOTICE[lang].format(failed=sum(reasons.values()), total=len(entries), why=why)


def source_notice(entries: Sequence[DigestEntry], lang: str, until: float | None, tz: str,
                  reason: str = "") -> str | None:
    """The commits whose diff could not be read; for a rate limit, when to try again."""
    lang = _lang(lang)
    limited = _reasons(entries, ("rate_limited",))
    if limited:
        when = SOON[lang] if until is None else _local_time(until, tz)
        return RATE_LIMIT_NOTICE[lang].format(failed=sum(limited.values()), total=len(entries), when=when)
    other = _reasons(entries, ("source",))
    if other:
        return SOURCE_NOTICE[lang].format(failed=sum(other.values()), total=len(entries), why=reason)
    return None


def cli_summary(entries: Sequence[DigestEntry], timeout: float) -> str | None:
    """`LLM failed for 27/27 commits: timed out after 2 s; offline analysis used` — or None."""
    reasons = _reasons(entries, LLM_REASONS)
    if not reasons:
        return None
    parts = [CLI_REASON[code].format(timeout=timeout) + (f" ({n})" if len(reasons) > 1 else "")
             for code, n in reasons.most_common()]
    return (f"LLM failed for {sum(reasons.values())}/{len(entries)} commits: {', '.join(parts)}; "
            "offline analysis used")


def _local_time(epoch: float, tz: str) -> str:
    moment = datetime.fromtimestamp(epoch, timezone.utc).astimezone(ZoneInfo(tz))
    return moment.strftime("%H:%M") + f" ({tz})"

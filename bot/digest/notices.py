"""What went wrong while building a digest, said out loud: the sentences shown at the top of the
digest (in its language) and the CLI's one-line summary on stderr.

Fallback analyses carry a reason code (`Analysis.fallback_reason`); these functions count them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from ..core.models import DigestEntry
from ..i18n import localize, text

LLM_REASONS = ("timeout", "unreachable", "http_error", "context", "rejected")
SOURCE_REASONS = ("rate_limited", "source")

# The sentences are in the catalogue: [notices] digest_* for the digest, [cli] for stderr.


def _lang(lang: str) -> str:
    return "zh" if lang == "zh" else "en"


def _reasons(entries: Sequence[DigestEntry], codes: Sequence[str]) -> Counter:
    return Counter(
        e.analysis.fallback_reason
        for e in entries
        if e.analysis and e.analysis.origin == "fallback" and e.analysis.fallback_reason in codes
    )


def llm_notice(entries: Sequence[DigestEntry], lang: str) -> str | None:
    """How many commits the LLM could not analyse and why (most frequent reason first)."""
    reasons = _reasons(entries, LLM_REASONS)
    if not reasons:
        return None
    lang = _lang(lang)
    why = text(lang, "notices.digest_reason_sep").join(
        text(lang, "notices.digest_reason_count", reason=text(lang, f"notices.digest_reason_{code}"), n=n)
        if len(reasons) > 1
        else text(lang, f"notices.digest_reason_{code}")
        for code, n in reasons.most_common()
    )
    return text(lang, "notices.digest_llm", failed=sum(reasons.values()), total=len(entries), why=why)


def source_notice(
    entries: Sequence[DigestEntry], lang: str, until: float | None, tz: str, reason: object = ""
) -> str | None:
    """The commits whose diff could not be read; for a rate limit, when to try again."""
    lang = _lang(lang)
    limited = _reasons(entries, ("rate_limited",))
    if limited:
        when = text(lang, "notices.digest_soon") if until is None else _local_time(until, tz)
        return text(lang, "notices.digest_rate_limit", failed=sum(limited.values()), total=len(entries), when=when)
    other = _reasons(entries, ("source",))
    if other:
        return text(
            lang, "notices.digest_source", failed=sum(other.values()), total=len(entries), why=localize(reason, lang)
        )
    return None


def cli_summary(entries: Sequence[DigestEntry], timeout: float, lang: str = "en") -> str | None:
    """`LLM failed for 27/27 commits: timed out after 2 s; offline analysis used` — or None."""
    reasons = _reasons(entries, LLM_REASONS)
    if not reasons:
        return None
    parts = [
        text(lang, f"cli.llm_reason_{code}", timeout=f"{timeout:g}") + (f" ({n})" if len(reasons) > 1 else "")
        for code, n in reasons.most_common()
    ]
    return text(
        lang,
        "cli.llm_failed",
        failed=sum(reasons.values()),
        total=len(entries),
        reasons=text(lang, "cli.list_sep").join(parts),
    )


def _local_time(epoch: float, tz: str) -> str:
    moment = datetime.fromtimestamp(epoch, UTC).astimezone(ZoneInfo(tz))
    return moment.strftime("%H:%M") + f" ({tz})"


def profile_notice(problem: object, lang: str) -> str:
    """The one sentence saying why the repository's `.digest.toml` was set aside."""
    return text(_lang(lang), "notices.digest_profile", problem=localize(problem, lang))

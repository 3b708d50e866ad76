"""The words every renderer shares, so Markdown, Slack, Feishu and the terminal say the same
thing: read from the message catalogue's [cards] section (bot/i18n/*.toml)."""
from __future__ import annotations

from ..i18n import text
from ..models import Analysis, Digest, Importance

def t(lang: str, key: str, /, **values) -> str:
    """A digest word from the catalogue's [cards] section."""
    return text(lang, f"cards.{key}", **values)


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

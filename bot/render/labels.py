"""The words every renderer shares, so Markdown, Slack, Feishu and the terminal say the same
thing: read from the message catalogue's [cards] section (bot/i18n/*.toml)."""

from __future__ import annotations

from datetime import datetime

from ..core.chat_platform import ROOT_AREA, UNKNOWN_AREA
from ..core.models import Analysis, Digest, Importance
from ..digest.authorfilter import as_typed
from ..i18n import Count, text


def t(lang: str, key: str, /, **values) -> str:
    """A digest word from the catalogue's [cards] section."""
    return text(lang, f"cards.{key}", **values)


def commits(lang: str, n: int) -> str:
    """ "1 commit" / "3 commits" / "3 个提交"."""
    return Count(n, "counts.commit").say(lang)


def meta_line(digest: Digest) -> str:
    """The digest's branch, time zone and how many commits it lists."""
    lang = digest.lang
    return t(lang, "meta", branch=digest.branch or "-", tz=digest.window.tz, commits=commits(lang, len(digest.entries)))


def colon(lang: str) -> str:
    return "：" if lang == "zh" else ": "


def title(digest: Digest) -> str:
    key = "title_range" if ".." in digest.window.label else "title_day"
    return t(digest.lang, key, label=digest.window.label)


def built_within(digest: Digest) -> bool:
    """Was the digest built while its window was still running (today's, this week's)? Only then
    do its stats say "today" / "this week"; a past day's say which day."""
    return digest.generated_at is not None and digest.window.contains(digest.generated_at)


def stats_line(digest: Digest) -> str:
    if ".." in digest.window.label:
        key = "stats_range"
    else:
        key = "stats_today" if built_within(digest) else "stats_day"
    return t(
        digest.lang,
        key,
        label=digest.window.label,
        commits=commits(digest.lang, len(digest.entries)),
        high=digest.count(Importance.HIGH),
        medium=digest.count(Importance.MEDIUM),
        low=digest.count(Importance.LOW),
    )


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
    if analysis.improved_at:  # a kept digest's fallback, improved in place later (bot/improve/)
        when = datetime.fromisoformat(analysis.improved_at).strftime("%m-%d %H:%M")  # the digest's clock
        was = text(lang, f"notices.digest_reason_{analysis.improved_from or 'source'}")
        return t(lang, "origin_improved" if analysis.origin == "llm" else "origin_improved_rules", time=when, was=was)
    return ""


# --- noise controls and the weekly roll-up (bot/digest/noise.py, bot/digest/rollup.py) ----------------------------

LINK = "\x00"  # where a renderer puts its own link in a sentence (`before, _, after = s.partition(LINK)`)


def filter_line(digest: Digest) -> str:
    """'🔎 paths crates/uv-resolver/** · authors alice — 12 of 221 commits', or '' for a digest
    without a filter."""
    lang = digest.lang
    parts = []
    if digest.paths:
        parts.append(text(lang, "noise.filter_paths", globs=" ".join(digest.paths)))
    if digest.exclude:
        parts.append(text(lang, "noise.filter_exclude", globs=" ".join(digest.exclude)))
    if digest.authors:
        parts.append(text(lang, "authors.filter_authors", names=" ".join(as_typed(digest.authors))))
    if digest.exclude_authors:
        parts.append(text(lang, "authors.filter_exclude", names=" ".join(as_typed(digest.exclude_authors))))
    if not parts:
        return ""
    return text(
        lang,
        "noise.filter_line",
        filter=" · ".join(parts),
        shown=len(digest.entries),
        total=len(digest.entries) + digest.filtered_out,
    )


def bots_heading(lang: str, groups) -> str:
    return text(lang, "noise.bots_heading", n=sum(len(g.entries) for g in groups))


def bot_line(lang: str, group, shown: int = 3) -> str:
    """'🤖 renovate[bot]: 14 updates — clap 4.5.53 → 4.5.54, tokio 1.48 → 1.49, …' (untrusted parts:
    the renderer escapes the whole line)."""
    updates = group.updates
    listed = text(lang, "noise.list_sep").join(updates[:shown]) + (
        text(lang, "noise.list_more") if len(updates) > shown else ""
    )
    key = "noise.bot_line_one" if len(group.entries) == 1 else "noise.bot_line"
    mediums = text(lang, "noise.bot_mediums", n=group.mediums) if group.mediums else ""
    return text(lang, key, author=group.author, n=len(group.entries), mediums=mediums, updates=listed)


def more_low(lang: str, n: int, how: str) -> str:
    """The line standing for the low commits not listed; with how == "link" it holds LINK."""
    return text(lang, f"noise.more_low_{how or 'page'}", n=n, link=LINK)


def low_heading(lang: str, total: int) -> str:
    return group_label(lang, Importance.LOW, total)


def week_title(digest: Digest) -> str:
    return text(digest.lang, "week.title", label=digest.window.label)


def week_stats(digest: Digest) -> str:
    return text(
        digest.lang,
        "week.stats" if built_within(digest) else "week.stats_past",
        label=digest.window.label,
        commits=commits(digest.lang, len(digest.entries)),
        high=digest.count(Importance.HIGH),
        medium=digest.count(Importance.MEDIUM),
        low=digest.count(Importance.LOW),
    )


def area_label(lang: str, area: str, n: int) -> str:

    name = {ROOT_AREA: text(lang, "week.root"), UNKNOWN_AREA: text(lang, "week.unknown")}.get(area, area)
    return text(lang, "week.area", area=name, n=n)


def day_of(digest: Digest, commit) -> str:
    """'Mon 01-19': the local day a commit of the week landed."""
    local = commit.local_time(digest.window.tz)
    weekday = text(digest.lang, f"week.{('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')[local.weekday()]}")
    return text(digest.lang, "week.day", weekday=weekday, date=local.strftime("%m-%d"))


def week_low(lang: str, n: int, how: str) -> str:
    """The roll-up's one line for its low commits; with how == "link" it holds LINK."""
    return text(lang, f"week.low_{how or 'page'}", n=n, link=LINK)


# --- alerts (bot/alerts/) ------------------------------------------------------------------------------


def branch_mark(lang: str, entry) -> str:
    """'on main, release/1.2 · backported as 1a2b3c4' under a commit of a digest of several
    branches (bot/sources/branches.py), or of an alert on a named branch; '' otherwise. Plain
    text: the caller escapes it."""
    parts = [t(lang, "on_branches", branches=", ".join(entry.branches))] if entry.branches else []
    if entry.backport_of:
        parts.append(t(lang, "backport_of", sha=entry.backport_of[:7]))
    if entry.backports:
        parts.append(t(lang, "backported_as", shas=", ".join(s[:7] for s in entry.backports)))
    return " · ".join(parts)


def entry_marks(lang: str, entry) -> str:
    """What a commit's line says besides itself: its branches and backports, whether it was
    alerted ('' for neither). Plain text: the caller escapes it."""
    return " · ".join(m for m in (branch_mark(lang, entry), alerted_mark(lang, entry)) if m)


def alerted_mark(lang: str, entry) -> str:
    """'🔔 alerted' on a commit posted on its own as an alert before this digest ('' otherwise)."""
    return text(lang, "alerts.marker") if entry.alerted else ""


# --- readers' level corrections (bot/levels/) -------------------------------------------------------

PAGE_READER = "report-page"  # who a tap on the report page is recorded as: the page knows no one
TERMINAL_READER = "you"  # the person at the terminal chat (handlers/console.py): "you" in the reader's words


def corrected_parts(lang: str, entry) -> tuple[str, str, str] | None:
    """'✏️ Level corrected to 🟢 Low by ', who, ' (was 🟡 Medium)' for an entry a reader corrected
    (None for any other): each renderer escapes the words and shows `who` its own way (a mention)."""
    if entry.corrected_from is None or not entry.corrected_by:
        return None
    line = text(
        lang,
        "levels.corrected",
        level=importance_label(lang, entry.importance),
        who=LINK,
        was=importance_label(lang, entry.corrected_from),
    )
    before, _, after = line.partition(LINK)
    shown_as = {PAGE_READER: "levels.page_reader", TERMINAL_READER: "levels.terminal_reader"}.get(entry.corrected_by)
    who = text(lang, shown_as) if shown_as else entry.corrected_by
    return before, who, after


def corrected_line(lang: str, entry) -> str:
    """The same line as plain text ('' for an entry nobody corrected)."""
    parts = corrected_parts(lang, entry)
    return "".join(parts) if parts else ""

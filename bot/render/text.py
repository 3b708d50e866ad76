"""Plain-text rendering of the chat contents, for the terminal chat (and as notification text)."""

from __future__ import annotations

from .. import i18n
from ..analysis.cost import cost_line
from ..core.chat_platform import (
    AnswerHeader,
    BotUpdates,
    CommitChoice,
    CommitDetail,
    CommitDetails,
    Content,
    DigestParent,
    LowCommits,
    Notice,
    UpgradeReport,
    WeekRollup,
    entries_at_least,
)
from ..core.models import Analysis, Importance
from ..diffs.reader import coverage_line
from . import labels as L
from . import owner_lines as OL
from .labels import t
from .safe import strip_controls
from .upgrade import entry_note, entry_text


def terminal_safe(text: str) -> str:
    """Terminal-safe: no escape sequences or other control characters from commit text or the LLM."""
    return "".join(ch if ch in "\n\t" or (ch.isprintable()) else "�" for ch in strip_controls(text))


def render_text(content: Content) -> str:
    if isinstance(content, Notice):
        return terminal_safe(content.text)
    if isinstance(content, DigestParent):
        return _parent(content)
    if isinstance(content, (CommitDetail, CommitDetails)):
        return _commit(content.digest, content.entry, full=True)
    if isinstance(content, LowCommits):
        d = content.digest
        lines = [L.group_label(d.lang, Importance.LOW, content.total or d.count(Importance.LOW))]
        for e in content.entries:
            summary = e.analysis.summary if e.analysis else e.error
            lines.append(
                f"  {e.importance.emoji} {e.commit.short_sha} {terminal_safe(e.commit.title)} — {terminal_safe(summary)}"
            )
            lines += _corrected(d, e, "    ")
        if content.more:
            lines.append("  " + _with_link(L.more_low(d.lang, content.more, content.more_how), content.report_url))
        return "\n".join(lines)
    if isinstance(content, BotUpdates):
        d = content.digest
        lines = [L.bots_heading(d.lang, content.groups)]
        for group in content.groups:
            lines.append("  " + terminal_safe(L.bot_line(d.lang, group)))
            for e in group.entries:
                lines.append(f"    {e.commit.short_sha} {terminal_safe(e.commit.title)}")
                lines += _corrected(d, e, "      ")
        return "\n".join(lines)
    if isinstance(content, WeekRollup):
        return _week(content)
    if isinstance(content, UpgradeReport):
        return _upgrade(content)
    if isinstance(content, CommitChoice):
        lines = [f"{t(content.lang, 'choose')} “{terminal_safe(content.question)}”"]
        lines += [f"  {i}. {c.short_sha} {terminal_safe(c.title)}" for i, c in enumerate(content.commits, 1)]
        return "\n".join(lines)
    if isinstance(content, AnswerHeader):
        line = f"❓ {terminal_safe(content.user)}: {terminal_safe(content.question)}"
        if content.commit is None:  # a question about a period
            return line
        return f"{line}  ({content.commit.short_sha} {terminal_safe(content.commit.title)})"
    raise TypeError(f"cannot render {type(content).__name__}")


def _parent(c: DigestParent) -> str:
    d = c.digest
    lines = [f"{L.title(d)} · {d.repo}", L.stats_line(d)]
    if L.filter_line(d):
        lines.append(terminal_safe(L.filter_line(d)))
    if spent := cost_line(d.cost, d.lang):  # what its LLM analyses cost
        lines.append(spent)
    if c.report_url:
        lines.append(f"{i18n.text(d.lang, 'report.link')}: {terminal_safe(c.report_url)}")
    lines += [terminal_safe(n) for n in d.notices]
    if d.headline:
        lines.append(
            t(d.lang, "headline_heading") + (" " + t(d.lang, "headline_offline") if d.headline_origin != "llm" else "")
        )
        lines += [f"  • {terminal_safe(b)}" for b in d.headline]
    highs = [e for e in entries_at_least(d.entries, "high")]
    if highs:
        lines.append(L.group_label(d.lang, Importance.HIGH, len(highs)))
        for e in highs:
            reason = e.analysis.importance_reason if e.analysis else e.error
            mark = L.entry_marks(d.lang, e)
            lines.append(
                f"  🔴 {e.commit.short_sha} {terminal_safe(e.commit.title)} — {terminal_safe(reason)}"
                + (f" · {mark}" if mark else "")
            )
            lines += _corrected(d, e, "    ")
    lines += _owner_lines(d.lang, c.owners, c.more_owners)
    return "\n".join(lines)


def _owner_lines(lang: str, owners, more: int) -> list[str]:
    """Once per owner; a terminal mentions no one: the mapped name, else the GitHub one."""
    if not owners:
        return []
    lines = [OL.heading(lang)]
    for p in owners:
        before, after = OL.line_parts(lang, p)
        lines.append("  " + terminal_safe(before + (f"@{p.id}" if p.kind == "name" else p.owner) + after))
    if more:
        lines.append("  " + OL.more(lang, more))
    return lines


def _corrected(d, e, indent: str) -> list[str]:
    """The line saying who corrected the commit's level, and from what ([] when nobody did)."""
    line = L.corrected_line(d.lang, e)
    return [indent + terminal_safe(line)] if line else []


def _with_link(sentence: str, url: str | None) -> str:
    before, marker, after = sentence.partition(L.LINK)
    return terminal_safe(before) + (terminal_safe(url or "") if marker else "") + terminal_safe(after)


def _upgrade(c: UpgradeReport) -> str:
    d = c.digest
    lines = [terminal_safe(c.title), c.stats]
    if L.filter_line(d):
        lines.append(terminal_safe(L.filter_line(d)))
    if c.report_url:
        lines.append(f"{i18n.text(d.lang, 'report.link')}: {terminal_safe(c.report_url)}")
    lines += [terminal_safe(n) for n in d.notices]
    if c.nothing:
        lines.append(c.nothing)
    for g in c.groups:
        lines.append(terminal_safe(g.heading))
        for e in g.entries:
            files = entry_note(g, e, d.lang)
            lines.append(
                f"  {e.importance.emoji} {e.commit.short_sha} {terminal_safe(entry_text(e))}"
                + (f" — {terminal_safe(files)}" if files else "")
            )
    if c.fork_clear:
        lines.append(terminal_safe(c.fork_clear))
    if c.low_line:
        lines.append(c.low_line)
    lines += _owner_lines(d.lang, c.owners, c.more_owners)
    return "\n".join(lines)


def _week(c: WeekRollup) -> str:
    d = c.digest
    lines = [f"{L.week_title(d)} · {d.repo}", L.week_stats(d)]
    if L.filter_line(d):
        lines.append(terminal_safe(L.filter_line(d)))
    if c.report_url:
        lines.append(f"{i18n.text(d.lang, 'report.link')}: {terminal_safe(c.report_url)}")
    lines += [terminal_safe(n) for n in d.notices]
    for area, entries in c.areas:
        lines.append(terminal_safe(L.area_label(d.lang, area, len(entries))))
        for e in entries:
            line = (
                f"  {e.importance.emoji} {L.day_of(d, e.commit)} {e.commit.short_sha} {terminal_safe(e.commit.title)}"
            )
            if mark := L.branch_mark(d.lang, e):  # a roll-up of several branches names each commit's
                line += f" · {terminal_safe(mark)}"
            if e.importance is Importance.HIGH and e.analysis:
                line += f" — {terminal_safe(e.analysis.importance_reason)}"
            lines.append(line)
            lines += _corrected(d, e, "    ")
    if not c.areas:
        lines.append(i18n.text(d.lang, "week.nothing"))
    if c.bots:
        lines.append(L.bots_heading(d.lang, c.bots))
        lines += ["  " + terminal_safe(L.bot_line(d.lang, g)) for g in c.bots]
    if c.low:
        lines.append(_with_link(L.week_low(d.lang, c.low, c.more_how), c.report_url))
    return "\n".join(lines)


def _commit(d, e, full: bool) -> str:
    lang, c, a = d.lang, e.commit, e.analysis
    lines = [f"{e.importance.emoji} {c.short_sha} {terminal_safe(c.title)}", f"  {c.url or ''}".rstrip()]
    if mark := L.branch_mark(lang, e):
        lines.append("  " + terminal_safe(mark))
    lines += _corrected(d, e, "  ")
    if e.error and (a is None or a.origin != "fallback"):
        lines.append("  " + t(lang, "unanalysed", reason=terminal_safe(e.error)))
    if a is None:
        return "\n".join(x for x in lines if x.strip())
    note = L.origin_note(lang, a)
    if note:
        lines.append("  " + terminal_safe(note))
    lines.append(
        f"  {t(lang, 'type')}: {a.change_type.label(lang)} · {t(lang, 'importance')}: "
        f"{L.importance_label(lang, a.importance)} — {terminal_safe(a.importance_reason)}"
    )
    lines += _fields(lang, a, full)
    if a.coverage is not None:
        lines.append(f"  {t(lang, 'coverage')}: {terminal_safe(coverage_line(a.coverage, lang))}")
    return "\n".join(x for x in lines if x.strip())


def _fields(lang: str, a: Analysis, full: bool) -> list[str]:
    out = [f"  {t(lang, 'summary')}: {terminal_safe(a.summary)}"]
    if a.impact:
        out.append(f"  {t(lang, 'impact')}: {terminal_safe(a.impact)}")
    for key in ("architecture", "performance", "security"):
        value = getattr(a.insights, key)
        if value:
            out.append(f"  {t(lang, 'insights')} / {t(lang, key)}: {terminal_safe(value)}")
    if a.risks:
        out.append(f"  {t(lang, 'risks')}:")
        out += [f"    - {terminal_safe(r)}" for r in a.risks]
    if a.recommendations:
        out.append(f"  {t(lang, 'recommendations')}:")
        out += [f"    - {terminal_safe(r)}" for r in a.recommendations]
    return out

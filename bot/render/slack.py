"""The chat contents as Slack messages: Block Kit as plain dicts, pure (no SDK, no I/O).

`render(content)` returns a list of payloads `{"text": <notification fallback>, "blocks": [...]}`,
posted in order. Every payload stays inside Block Kit's limits and under Slack's undocumented
cumulative size; content that does not fit is split into more blocks or continuation payloads, never
cut. Untrusted text reaches a block only through `esc`, and the only links are the ones built from
URLs the bot itself knows (commit, PR, reverted commit).

This module holds `render` and the digest's views: the notice, the digest's parent message, a
commit's detail in the thread (and its full details, privately), the low commits and the bots with
their menus, the weekly roll-up. What they are made of — limits, escaping, blocks, pagination,
action ids — is `bot/render/slack_kit.py`; the question side (choosing a commit, an answer's header,
the Ask form) is `bot/render/slack_answers.py`. The names the handlers and tests use from those two
are re-exported here (`__all__`), so `bot.render.slack` stays the one Slack renderer to import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
    OwnerPing,
    UpgradeReport,
    WeekRollup,
    entries_at_least,
)
from ..core.models import Analysis, Commit, Digest, DigestEntry, Importance
from ..diffs.reader import coverage_line
from ..i18n import text
from . import fork_section as DS
from . import labels as L
from . import owner_lines as OL
from .labels import t
from .slack_answers import MODAL_BLOCK, MODAL_CALLBACK, MODAL_INPUT, ask_modal, render_answer_header, render_choice
from .slack_kit import (
    ACTION_ASK,
    ACTION_CHOOSE_PATTERN,
    ACTION_DETAILS,
    ACTION_LEVEL,
    ACTION_LEVEL_MENU,
    ACTION_LEVEL_PATTERN,
    ACTION_LOW,
    BLOCK_ID_CHARS,
    BUTTON_CHARS,
    DIRECTIONS,
    OPTION_CHARS,
    SELECT_OPTIONS,
    VALUE_CHARS,
    actions,
    block_size,
    button,
    colon,
    compact_json,
    context,
    esc,
    finish_pages,
    fit_label,
    guess_lang,
    header,
    link,
    md_to_mrkdwn,
    mention,
    packed_sections,
    paginate,
    parse_value,
    plain,
    plain_texts,
    s,
    safe_url,
    sections,
    unescape,
)
from .upgrade import entry_note, entry_text

__all__ = [
    # the views
    "render",
    "render_notice",
    "render_parent",
    "render_commit",
    "render_low",
    "render_bots",
    "render_week",
    "render_upgrade",
    "render_choice",
    "render_answer_header",
    "ask_modal",
    "corrected",
    "commit_value",
    # re-exported from slack_kit / slack_answers for the handlers and tests
    "ACTION_ASK",
    "ACTION_CHOOSE_PATTERN",
    "ACTION_DETAILS",
    "ACTION_LEVEL_MENU",
    "ACTION_LEVEL_PATTERN",
    "ACTION_LOW",
    "MODAL_BLOCK",
    "MODAL_CALLBACK",
    "MODAL_INPUT",
    "block_size",
    "colon",
    "compact_json",
    "context",
    "esc",
    "link",
    "md_to_mrkdwn",
    "mention",
    "packed_sections",
    "parse_value",
    "plain",
    "plain_texts",
    "s",
    "unescape",
]

LOW_PER_PAGE = 20  # low commits to a message, each message with its own menu


def render(content: Content, *, thread: str | None = None) -> list[dict]:
    """Slack payloads for one content, in posting order. `thread`: the thread the message goes
    into, carried in button values so a click finds its digest thread."""
    if isinstance(content, Notice):
        return render_notice(content)
    if isinstance(content, DigestParent):
        return render_parent(content)
    if isinstance(content, CommitDetails):
        return render_commit(content.digest, content.entry, full=True, thread=thread)
    if isinstance(content, CommitDetail):
        return render_commit(content.digest, content.entry, full=False, thread=thread)
    if isinstance(content, LowCommits):
        return render_low(content, thread=thread)
    if isinstance(content, BotUpdates):
        return render_bots(content, thread=thread)
    if isinstance(content, WeekRollup):
        return render_week(content)
    if isinstance(content, UpgradeReport):
        return render_upgrade(content)
    if isinstance(content, CommitChoice):
        return render_choice(content, thread=thread)
    if isinstance(content, AnswerHeader):
        return render_answer_header(content)
    raise TypeError(f"cannot render {type(content).__name__} for Slack")


def render_notice(n: Notice) -> list[dict]:
    text = esc(n.text) if n.text.strip() else "…"
    return paginate(sections(text), n.text.split("\n", 1)[0] or "…", n.lang or guess_lang(n.text))


# --- the digest's parent message ------------------------------------------------------------------------


def render_parent(c: DigestParent) -> list[dict]:
    d, lang = c.digest, c.digest.lang
    title = f"{L.title(d)} · {d.repo}"
    blocks = header(esc(title))
    blocks += context(esc(L.meta_line(d)), esc(L.filter_line(d)))
    blocks += sections(esc(L.stats_line(d)))
    if spent := cost_line(d.cost, lang):  # what its LLM analyses cost
        blocks += context(esc(spent))
    if safe_url(c.report_url):  # the full report page, near the top where it is seen
        blocks += sections(link(c.report_url, esc(text(lang, "report.link"))))
    for notice in d.notices:  # what went wrong while building it, before any content
        blocks += sections(esc(notice))
    if d.headline:
        label = t(lang, "headline_heading")
        if d.headline_origin != "llm":
            label += " " + t(lang, "headline_offline")
        blocks += packed_sections([f"• {md_to_mrkdwn(esc(b))}" for b in d.headline], label=esc(label))
    highs = entries_at_least(d.entries, "high")
    if highs:
        lines = [_high_line(d, e) for e in highs]
        blocks += packed_sections(lines, label=esc(L.group_label(lang, Importance.HIGH, len(highs))))
    blocks += _owner_blocks(lang, c.owners, c.more_owners)
    if d.fork and d.entries:
        lines = [esc(DS.intro(d))] + [
            f"{link(e.commit.url, f'`{e.commit.short_sha}`')} *{esc(e.commit.title)}* — {esc(DS.line(d, e.downstream))}"
            for e in DS.flagged(d)
        ]
        blocks += packed_sections(lines, label=esc(DS.heading(d)))
    return paginate(blocks, f"{title} — {L.stats_line(d)}", lang)


_GROUP_ID = re.compile(r"^S[A-Z0-9]{2,20}$")


def _owner_blocks(lang: str, owners: Sequence[OwnerPing], more: int) -> list[dict]:
    """Once per owner: mapped ones are mentioned, the others named in plain text."""
    if not owners:
        return []
    lines = [_owner_line(lang, p) for p in owners]
    lines += [esc(OL.more(lang, more))] if more else []
    return packed_sections(lines, label=esc(OL.heading(lang)))


def _owner_line(lang: str, p: OwnerPing) -> str:
    """A mapped owner's mention (a user, a user group), else its GitHub name as escaped text."""
    if p.kind == "slack_user":
        who = mention(p.id)
    elif p.kind == "slack_group" and _GROUP_ID.match(p.id):
        who = f"<!subteam^{p.id}>"
    else:
        who = esc(p.owner)
    before, after = OL.line_parts(lang, p)
    return esc(before) + who + esc(after)


def _high_line(d: Digest, e: DigestEntry) -> str:
    c = e.commit
    reason = e.analysis.importance_reason if e.analysis else e.error
    line = f"{e.importance.emoji} {link(c.url, f'`{c.short_sha}`')} *{esc(c.title)}*"
    if mark := L.entry_marks(d.lang, e):
        line += f" · _{esc(mark)}_"
    return line + (f" — {md_to_mrkdwn(esc(reason))}" if reason else "") + _corrected_tail(d, e)


def corrected(d: Digest, e: DigestEntry) -> str:
    """'✏️ Level corrected to 🟢 Low by @ana (was 🟡 Medium)', the corrector mentioned ('' when
    nobody corrected the commit)."""
    parts = L.corrected_parts(d.lang, e)
    if parts is None:
        return ""
    before, who, after = parts
    return esc(before) + mention(who) + esc(after)


def _corrected_tail(d: Digest, e: DigestEntry) -> str:
    line = corrected(d, e)
    return f"\n      _{line}_" if line else ""


# --- a commit in the thread (and its full details) --------------------------------------------------------


def _meta_line(d: Digest, c: Commit) -> str:
    lang = d.lang
    parts = [link(c.url, f"`{c.short_sha}`")]
    if c.url:
        parts.append(link(c.url, esc(t(lang, "view_commit"))))
    if (pr_url := d.change_url(c.pr_number)) and c.pr_number:
        parts.append(f"{t(lang, d.links.change_word)} {link(pr_url, d.links.change_ref(c.pr_number))}")
    parts.append(f"{esc(t(lang, 'author'))} {esc(c.author)}")
    parts.append(c.local_time(d.window.tz).strftime("%Y-%m-%d %H:%M"))
    return " · ".join(parts)


def _commit_blocks(d: Digest, e: DigestEntry, full: bool) -> list[dict]:
    lang, c, a = d.lang, e.commit, e.analysis
    blocks = sections(f"{e.importance.emoji} *{esc(c.title)}*")
    mark = L.entry_marks(lang, e)
    blocks += context(_meta_line(d, c) + (f" · {esc(mark)}" if mark else ""), corrected(d, e))
    if flag := DS.flag(d, e):
        blocks += sections(f"*{esc(flag)}*")
    if c.reverts:
        url = d.commit_url(c.reverts)
        before, _, after = t(lang, "reverts", sha="\x00").partition("\x00")  # the label around our link
        blocks += sections(esc(before) + link(url, f"`{c.reverts[:7]}`") + esc(after))
    if e.error and (a is None or a.origin != "fallback"):
        blocks += sections(esc(t(lang, "unanalysed", reason=e.error)))
    if a is None:
        return blocks
    note = L.origin_note(lang, a)
    if note:
        blocks += context(esc(note))
    reason = f" — {md_to_mrkdwn(esc(a.importance_reason))}" if a.importance_reason else ""
    sep = colon(lang)
    blocks += sections(
        f"*{esc(t(lang, 'type'))}*{sep}{esc(a.change_type.label(lang))} · "
        f"*{esc(t(lang, 'importance'))}*{sep}{L.importance_label(lang, a.importance)}{reason}"
    )
    blocks += _field(lang, "summary", a.summary)
    if full or a.importance is not Importance.LOW:
        blocks += _field(lang, "impact", a.impact)
        blocks += _insights(lang, a)
        blocks += _bullets(lang, "risks", a.risks)
        blocks += _bullets(lang, "recommendations", a.recommendations)
    if a.coverage is not None:
        blocks += context(f"{esc(t(lang, 'coverage'))}{colon(lang)}{esc(coverage_line(a.coverage, lang))}")
    return blocks


def _field(lang: str, key: str, value: str) -> list[dict]:
    if not value or not value.strip():
        return []
    return sections(md_to_mrkdwn(esc(value.strip())), label=esc(t(lang, key)))


def _insights(lang: str, a: Analysis) -> list[dict]:
    rows = [(k, getattr(a.insights, k)) for k in ("architecture", "performance", "security")]
    lines = [f"• *{esc(t(lang, k))}*{colon(lang)}{md_to_mrkdwn(esc(v.strip()))}" for k, v in rows if v and v.strip()]
    return packed_sections(lines, label=esc(t(lang, "insights"))) if lines else []


def _bullets(lang: str, key: str, items: Sequence[str]) -> list[dict]:
    lines = [f"• {md_to_mrkdwn(esc(i.strip()))}" for i in items if i and i.strip()]
    return packed_sections(lines, label=esc(t(lang, key))) if lines else []


def commit_value(d: Digest, commit: Commit, thread: str | None) -> str:
    """What the Ask / Details buttons carry back: {repo, sha, lang, tz, thread?} (≤2000)."""
    return compact_json(
        {"repo": d.repo_id, "sha": commit.sha, "lang": d.lang, "tz": d.window.tz, "thread": thread},
        VALUE_CHARS,
        optional=("thread", "tz"),
    )


def render_commit(d: Digest, e: DigestEntry, *, full: bool, thread: str | None = None) -> list[dict]:
    """CommitDetail (in the digest thread, with Ask + Details) or CommitDetails (everything,
    shown privately, with Ask)."""
    lang = d.lang
    value = commit_value(d, e.commit, thread)
    buttons = [button(s(lang, "ask"), ACTION_ASK, value, style="primary")]
    if not full:  # in the digest's thread: the message a level tap redraws
        buttons.append(button(s(lang, "details"), ACTION_DETAILS, value))
        buttons += [button(text(lang, f"levels.{way}"), f"{ACTION_LEVEL}_{way}", value) for way in DIRECTIONS]
    fallback = f"{e.importance.emoji} {e.commit.short_sha} {e.commit.title}"
    return paginate(_commit_blocks(d, e, full), fallback, lang, tail=actions(buttons))


# --- the low commits and the bots, with their menus ----------------------------------------------------


def render_low(c: LowCommits, *, thread: str | None = None) -> list[dict]:
    """One line per commit (sha link, title, type, one-line summary) and a menu to Ask about or
    see the details of any of them. Each payload has its own menu for its own commits."""
    d, lang = c.digest, c.digest.lang
    label = esc(L.group_label(lang, Importance.LOW, c.total or d.count(Importance.LOW)))
    groups = [list(c.entries[i : i + LOW_PER_PAGE]) for i in range(0, len(c.entries), LOW_PER_PAGE)] or [[]]
    pages: list[list[dict]] = []
    for n, group in enumerate(groups):
        lines = [_low_line(d, e) for e in group]
        blocks = packed_sections(lines, label=label if n == 0 else None)
        if group:
            blocks += [_low_menu(d, group, thread), *_level_menu(d, group, thread)]
        if c.more and n == len(groups) - 1:  # the rest: one line, with where to read them
            blocks += sections(_with_link(L.more_low(lang, c.more, c.more_how), c.report_url, lang))
        for page in paginate(blocks, "", lang):  # only splits when one group is still too big
            pages.append(page["blocks"])
    return finish_pages(pages, f"{unescape(label)} · {d.repo}", lang)


def _low_line(d: Digest, e: DigestEntry) -> str:
    c, a = e.commit, e.analysis
    parts = [f"{e.importance.emoji} {link(c.url, f'`{c.short_sha}`')} {esc(c.title)}"]
    if a is not None:
        parts.append(f"_{esc(a.change_type.label(d.lang))}_")
        summary = " ".join(a.summary.split())
        if summary:
            parts.append(md_to_mrkdwn(esc(summary)))
    elif e.error:
        parts.append(esc(t(d.lang, "unanalysed", reason=e.error)))
    if mark := L.branch_mark(d.lang, e):
        parts.append(f"_{esc(mark)}_")
    return " · ".join(parts) + _corrected_tail(d, e)


def _low_menu(d: Digest, entries: Sequence[DigestEntry], thread: str | None) -> dict:
    lang = d.lang

    def option(prefix: str, e: DigestEntry) -> dict:
        return {
            "text": plain(fit_label(f"{e.commit.short_sha} {e.commit.title}", OPTION_CHARS)),
            "value": f"{prefix}:{e.commit.sha}",
        }

    entries = list(entries)[: SELECT_OPTIONS // 2]
    select = {
        "type": "static_select",
        "action_id": ACTION_LOW,
        "placeholder": plain(s(lang, "low_placeholder")),
        "option_groups": [
            {"label": plain(s(lang, "low_ask")), "options": [option("ask", e) for e in entries]},
            {"label": plain(s(lang, "low_details")), "options": [option("details", e) for e in entries]},
        ],
    }
    block_id = compact_json(
        {"repo": d.repo_id, "lang": lang, "tz": d.window.tz, "thread": thread},
        BLOCK_ID_CHARS,
        optional=("thread", "tz", "repo"),
    )
    return {"type": "actions", "block_id": block_id, "elements": [select]}


# The level menu stays small, so that it does not push a busy list over Slack's size into a second
# message: its labels are handles (sha, the start of the title; the list above holds the rest) and
# its values name the commit by a 12-digit prefix (the tap is checked against the message's own).
LEVEL_OPTION_CHARS = 32
LEVEL_SHA_CHARS = 12


def _level_menu(d: Digest, entries: Sequence[DigestEntry], thread: str | None) -> list[dict]:
    """A menu correcting the level of any of `entries` (a block of its own, so that a page that
    grows too big for one message can put it on the next; one per message: a unique action_id).
    Each commit is offered the ways its level can still go (a low one: up only), which also keeps
    the menu small; the message is redrawn after each correction, and the menu with it."""
    lang = d.lang
    entries = [e for e in entries if e.analysis is not None][: SELECT_OPTIONS // 2]
    ends = {"too_high": Importance.LOW, "too_low": Importance.HIGH}
    groups = [
        {
            "label": plain(fit_label(text(lang, f"levels.group_{way}"), OPTION_CHARS)),
            "options": [
                {
                    "text": plain(fit_label(f"{e.commit.short_sha} {e.commit.title}", LEVEL_OPTION_CHARS)),
                    "value": f"{way}:{e.commit.sha[:LEVEL_SHA_CHARS]}",
                }
                for e in entries
                if e.importance is not ends[way]
            ],
        }
        for way in DIRECTIONS
    ]
    select = {
        "type": "static_select",
        "action_id": ACTION_LEVEL_MENU,
        "placeholder": plain(fit_label(text(lang, "levels.placeholder"), BUTTON_CHARS)),
        "option_groups": [g for g in groups if g["options"]],
    }
    block_id = compact_json(
        {"repo": d.repo_id, "lang": lang, "tz": d.window.tz, "thread": thread, "menu": "level"},
        BLOCK_ID_CHARS,
        optional=("thread", "tz", "repo"),
    )
    return [{"type": "actions", "block_id": block_id, "elements": [select]}] if select["option_groups"] else []


def _with_link(sentence: str, url: str | None, lang: str) -> str:
    """A catalogue sentence holding labels.LINK, escaped, with the report link where LINK is."""
    before, marker, after = sentence.partition(L.LINK)
    return esc(before) + (link(url, esc(text(lang, "report.link"))) if marker else "") + esc(after)


def render_bots(c: BotUpdates, *, thread: str | None = None) -> list[dict]:
    """One line per bot, and a menu to Ask about or see the details of any of their commits (the
    first SELECT_OPTIONS/2; the report page and the attached report hold every one)."""
    d, lang = c.digest, c.digest.lang
    label = L.bots_heading(lang, c.groups)
    blocks = packed_sections([esc(L.bot_line(lang, g)) for g in c.groups], label=esc(label))
    listed = [e for g in c.groups for e in g.entries]
    blocks += [_low_menu(d, listed, thread), *_level_menu(d, listed, thread)]
    return paginate(blocks, f"{label} · {d.repo}", lang)


# --- the weekly roll-up -----------------------------------------------------------------------------------


def render_week(c: WeekRollup) -> list[dict]:
    """The weekly roll-up: one message (continued only past Slack's size limit)."""
    d, lang = c.digest, c.digest.lang
    title = f"{L.week_title(d)} · {d.repo}"
    blocks = header(esc(title))
    blocks += context(esc(L.meta_line(d)), esc(L.filter_line(d)))
    blocks += sections(esc(L.week_stats(d)))
    if safe_url(c.report_url):
        blocks += sections(link(c.report_url, esc(text(lang, "report.link"))))
    for notice in d.notices:
        blocks += sections(esc(notice))
    if d.headline:
        label = t(lang, "headline_heading") + (" " + t(lang, "headline_offline") if d.headline_origin != "llm" else "")
        blocks += packed_sections([f"• {md_to_mrkdwn(esc(b))}" for b in d.headline], label=esc(label))
    for area, entries in c.areas:
        blocks += packed_sections(
            [_week_line(d, e) for e in entries], label=esc(L.area_label(lang, area, len(entries)))
        )
    if not c.areas:
        blocks += sections(esc(text(lang, "week.nothing")))
    if c.bots:
        blocks += packed_sections([esc(L.bot_line(lang, g)) for g in c.bots], label=esc(L.bots_heading(lang, c.bots)))
    if c.low:
        blocks += sections(_with_link(L.week_low(lang, c.low, c.more_how), c.report_url, lang))
    return paginate(blocks, f"{title} — {L.week_stats(d)}", lang)


# --- the upgrade report of a release range --------------------------------------------------------


def render_upgrade(c: UpgradeReport) -> list[dict]:
    """A range's parent message: what an upgrade must handle first, then features and fixes by
    area, the low commits counted (bot/render/upgrade.py); the thread holds the commits in full."""
    d, lang = c.digest, c.digest.lang
    blocks = header(esc(f"{c.title}"))
    blocks += context(esc(L.meta_line(d)), esc(L.filter_line(d)))
    blocks += sections(esc(c.stats))
    if safe_url(c.report_url):
        blocks += sections(link(c.report_url, esc(text(lang, "report.link"))))
    for notice in d.notices:
        blocks += sections(esc(notice))
    if d.headline:
        label = t(lang, "headline_heading") + (" " + t(lang, "headline_offline") if d.headline_origin != "llm" else "")
        blocks += packed_sections([f"• {md_to_mrkdwn(esc(b))}" for b in d.headline], label=esc(label))
    if c.nothing:
        blocks += sections(esc(c.nothing))
    for g in c.groups:
        lines = []
        for e in g.entries:
            files = entry_note(g, e, lang)
            line = f"{e.importance.emoji} {link(e.commit.url, f'`{e.commit.short_sha}`')} {md_to_mrkdwn(esc(entry_text(e)))}"
            lines.append(line + (f" — {esc(files)}" if files else ""))
        blocks += packed_sections(lines, label=esc(g.heading))
    if c.fork_clear:
        blocks += sections(esc(c.fork_clear))
    if c.low_line:
        blocks += sections(esc(c.low_line))
    blocks += _owner_blocks(lang, c.owners, c.more_owners)
    return paginate(blocks, f"{c.title} — {c.stats}", lang)


def _week_line(d: Digest, e: DigestEntry) -> str:
    c = e.commit
    line = f"{e.importance.emoji} {esc(L.day_of(d, c))} {link(c.url, f'`{c.short_sha}`')} {esc(c.title)}"
    if mark := L.branch_mark(d.lang, e):  # a roll-up of several branches names each commit's
        line += f" · _{esc(mark)}_"
    if e.importance is Importance.HIGH:
        reason = e.analysis.importance_reason if e.analysis else e.error
        line += f" — {md_to_mrkdwn(esc(reason))}" if reason else ""
    return line + _corrected_tail(d, e)

"""Feishu/Lark interactive cards (card JSON 2.0) for every chat content type. Pure: content in,
a list of card dicts out — one card per Feishu message.

Native to Feishu: a coloured header with importance tags, collapsible panels for the long parts
of an analysis, buttons whose callbacks carry what the conversation core needs, a form for
questions, and a streaming card for answers. Every card fits Feishu's request-body limit (what does
not fit continues on the next card, nothing is dropped), and untrusted text reaches it only through
`md_escape`.

This module holds `render_cards` and the digest's views: notices, the digest's parent card, a
commit's card in the thread (and its full details), the low commits and the bots with their level
buttons, the weekly roll-up. What they are made of — escaping, sizes, blocks, `pack` — is
`bot/render/feishu_kit.py`; the question side (choosing a commit, an answer's header, the Ask form,
the streaming answer) is `bot/render/feishu_answers.py`. The names the handlers and tests use from
those two are re-exported here (`__all__`), so `bot.render.feishu` stays the one Feishu renderer to
import.
"""

from __future__ import annotations

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
from .feishu_answers import (
    ANSWER_ELEMENT,
    answer_card,
    answer_cut,
    answer_fits,
    answer_header_cards,
    answer_segments,
    ask_form_card,
    choice_cards,
    form_submitted_card,
)
from .feishu_kit import (
    CARD_BUDGET,
    MAX_BODY_BYTES,
    MAX_CARD_BYTES,
    Block,
    Fixed,
    Header,
    Md,
    Panel,
    all_markdown,
    body_bytes,
    button,
    card,
    card_bytes,
    card_json,
    clean,
    escaped_bytes,
    fence_opener,
    ft,
    grey,
    link,
    md_escape,
    mention,
    pack,
    plain,
    request_bytes,
    row,
    safe_url,
    stable_id,
)
from .labels import t
from .upgrade import entry_note, entry_text

__all__ = [
    "render_cards",
    "md_escape",
    "card_json",
    "card_bytes",
    "body_bytes",
    "request_bytes",
    "escaped_bytes",
    "MAX_BODY_BYTES",
    "answer_card",
    "answer_segments",
    "answer_cut",
    "ask_form_card",
    "form_submitted_card",
    "ephemeral_card",
    "notice_cards",
    "ft",
    "stable_id",
    "all_markdown",
    "CARD_BUDGET",
    "MAX_CARD_BYTES",
    "ANSWER_ELEMENT",
    "fence_opener",
    "plain",
    "clean",
    # the other views
    "digest_cards",
    "commit_cards",
    "low_cards",
    "bot_cards",
    "week_cards",
    "upgrade_cards",
    "choice_cards",
    "answer_header_cards",
    "button_value",
    # re-exported from feishu_kit / feishu_answers for the handlers and tests
    "answer_fits",
    "card",
    "pack",
    "Fixed",
    "Md",
    "Panel",
    "link",
    "safe_url",
]


IMPORTANCE_COLOUR = {Importance.HIGH: "red", Importance.MEDIUM: "orange", Importance.LOW: "green"}


def render_cards(content: Content, *, thread: str | None = None, lang: str = "zh") -> list[dict]:
    """Feishu cards for one piece of chat content. `thread` (the thread the cards go to) is put in
    button payloads; `lang` is used by contents that carry no language of their own."""
    if isinstance(content, Notice):
        return notice_cards(content.text, content.lang or lang)
    if isinstance(content, DigestParent):
        return digest_cards(content.digest, content.report_url, content.owners, content.more_owners)
    if isinstance(content, CommitDetail):
        return commit_cards(content.digest, content.entry, thread=thread, full=False)
    if isinstance(content, CommitDetails):
        return commit_cards(content.digest, content.entry, thread=thread, full=True)
    if isinstance(content, LowCommits):
        return low_cards(
            content.digest,
            content.entries,
            thread=thread,
            total=content.total,
            more=_with_link(
                L.more_low(content.digest.lang, content.more, content.more_how), content.report_url, content.digest.lang
            )
            if content.more
            else "",
        )
    if isinstance(content, BotUpdates):
        return bot_cards(content.digest, content.groups, thread=thread)
    if isinstance(content, WeekRollup):
        return week_cards(content)
    if isinstance(content, UpgradeReport):
        return upgrade_cards(content)
    if isinstance(content, CommitChoice):
        return choice_cards(content, thread=thread, lang=content.lang or _lang_of(content.question, lang))
    if isinstance(content, AnswerHeader):
        return answer_header_cards(content, content.lang or _lang_of(content.question, lang))
    raise TypeError(f"cannot render {type(content).__name__} as a Feishu card")


def _lang_of(text: str, default: str) -> str:
    if any("\u4e00" <= ch <= "\u9fff" for ch in text):
        return "zh"
    return "en" if text.strip() else default


def notice_cards(text: str, lang: str = "zh") -> list[dict]:
    return pack([Md(text)], None, plain(text, 60), lang)


# --- the small text-only card for ephemeral ("only you can see this") messages ----------------


def ephemeral_card(text: str) -> dict:
    """The ephemeral-message API takes a message card in the older JSON 1.0 shape."""
    return {
        "config": {"wide_screen_mode": True},
        "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": md_escape(text)}}],
    }


# --- the digest's parent card ------------------------------------------------------------------


def _digest_head(d: Digest, title: str, stats: str) -> tuple[Header, list[Block]]:
    """The card header (coloured by the highest level present) and the stats, meta and filter
    lines that open a day's digest and a weekly roll-up alike."""
    counts = [(imp, d.count(imp)) for imp in Importance]
    top = next((imp for imp, n in counts if n), Importance.LOW)
    header = Header(
        title,
        IMPORTANCE_COLOUR[top] if d.entries else "blue",
        subtitle=f"{d.repo} · {d.branch}" if d.branch else d.repo,
        tags=[(f"{imp.emoji} {n}", IMPORTANCE_COLOUR[imp]) for imp, n in counts if n],
    )
    meta = grey(md_escape(L.meta_line(d)))
    blocks: list[Block] = [Fixed({"tag": "markdown", "content": md_escape(stats) + "\n" + meta})]
    if L.filter_line(d):
        blocks.append(Md(L.filter_line(d), wrap=grey))
    return header, blocks


def digest_cards(
    d: Digest, report_url: str | None = None, owners: Sequence[OwnerPing] = (), more_owners: int = 0
) -> list[dict]:
    lang = d.lang
    header, blocks = _digest_head(d, L.title(d), L.stats_line(d))
    if spent := cost_line(d.cost, lang):  # what its LLM analyses cost
        blocks.append(Fixed({"tag": "markdown", "content": grey(md_escape(spent))}))
    if safe_url(report_url):  # the full report page, a button near the top
        blocks.append(Fixed(row([button(text(lang, "report.link"), url=safe_url(report_url))])))
    blocks += [Md(n) for n in d.notices]  # what went wrong while building it, before any content
    if d.headline:
        note = " " + grey(md_escape(t(lang, "headline_offline"))) if d.headline_origin != "llm" else ""
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(t(lang, 'headline_heading'))}**{note}"}))
        blocks += [Md(b, prefix="- ") for b in d.headline]
    highs = entries_at_least(d.entries, "high")
    if highs:
        blocks.append(Fixed({"tag": "hr"}))
        blocks.append(
            Fixed({"tag": "markdown", "content": f"**{md_escape(L.group_label(lang, Importance.HIGH, len(highs)))}**"})
        )
        for e in highs:
            reason = e.analysis.importance_reason if e.analysis else e.error
            blocks.append(Md(reason, prefix=_commit_line(d, e) + "\n", wrap=grey, suffix=_corrected_md(d, e, "\n")))
    blocks += _owner_blocks(lang, owners, more_owners)
    if d.fork and d.entries:
        blocks.append(Fixed({"tag": "hr"}))
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(DS.heading(d))}**"}))
        blocks.append(Md(DS.intro(d)))
        blocks += [Md(DS.line(d, e.downstream), prefix=_commit_line(d, e) + "\n") for e in DS.flagged(d)]
    if d.entries:
        blocks.append(Fixed({"tag": "markdown", "content": grey(md_escape(ft(lang, "thread_hint")))}))
    return pack(blocks, header, L.title(d) + " · " + d.repo, lang)


def _owner_blocks(lang: str, owners: Sequence[OwnerPing], more: int) -> list[Block]:
    """Once per owner: mapped ones are mentioned (<at>), the others named in plain text."""
    if not owners:
        return []
    blocks: list[Block] = [Fixed({"tag": "markdown", "content": f"**{md_escape(OL.heading(lang))}**"})]
    blocks += [Fixed({"tag": "markdown", "content": _owner_line(lang, p)}) for p in owners]
    if more:
        blocks.append(Fixed({"tag": "markdown", "content": md_escape(OL.more(lang, more))}))
    return blocks


def _owner_line(lang: str, p: OwnerPing) -> str:
    """A mapped owner's <at> mention, else its GitHub name escaped (no @-mention forms)."""
    who = mention(p.id) if p.kind == "feishu_user" else md_escape(p.owner)
    before, after = OL.line_parts(lang, p)
    return md_escape(before) + who + md_escape(after)


def _commit_line(d: Digest, e: DigestEntry) -> str:
    """`🔴 **title** · abc1234 · PR #12` with the bot-built links."""
    c = e.commit
    parts = [f"{e.importance.emoji} **{md_escape(plain(c.title))}**", link(c.short_sha, c.url)]
    if (pr_url := d.change_url(c.pr_number)) and c.pr_number:
        parts.append(link(f"{t(d.lang, d.links.change_word)} {d.links.change_ref(c.pr_number)}", pr_url))
    if mark := L.entry_marks(d.lang, e):
        parts.append(md_escape(mark))
    return " · ".join(parts)


def _corrected_md(d: Digest, e: DigestEntry, before: str = "") -> str:
    """'✏️ Level corrected to 🟢 Low by @ana (was 🟡 Medium)' in grey, the corrector mentioned
    (an open_id) or named; '' when nobody corrected the commit."""
    parts = L.corrected_parts(d.lang, e)
    if parts is None:
        return ""
    words_before, who, words_after = parts
    return before + grey(md_escape(words_before) + mention(who) + md_escape(words_after))


def _level_row(d: Digest, e: DigestEntry, thread: str | None) -> Fixed:
    """A commit's two level-correction buttons (callbacks carrying the commit and the direction)."""
    return Fixed(
        row(
            [
                button(
                    text(d.lang, f"levels.{way}"),
                    value=button_value("level", d, e.commit, thread, dir=way),
                    size="small",
                )
                for way in ("too_high", "too_low")
            ]
        )
    )


# --- a commit's card in the thread (and its full details) -----------------------------------------


def commit_cards(d: Digest, e: DigestEntry, *, thread: str | None, full: bool) -> list[dict]:
    lang, c, a = d.lang, e.commit, e.analysis
    tags = [(L.importance_label(lang, e.importance), IMPORTANCE_COLOUR[e.importance])]
    if a is not None:
        tags.append((a.change_type.label(lang), "neutral"))
    when = c.local_time(d.window.tz).strftime("%Y-%m-%d %H:%M")
    header = Header(
        f"{e.importance.emoji} {c.title}",
        IMPORTANCE_COLOUR[e.importance],
        subtitle=f"{d.repo} · {c.short_sha} · {c.author} · {when}",
        tags=tags,
    )
    blocks: list[Block] = [Fixed({"tag": "markdown", "content": _meta_line(d, e)})]
    if line := _corrected_md(d, e):
        blocks.append(Fixed({"tag": "markdown", "content": line}))
    if flag := DS.flag(d, e):
        blocks.append(Md(flag, prefix="**", suffix="**"))
    if c.reverts:
        target = link(c.reverts[:7], d.commit_url(c.reverts))
        blocks.append(Fixed({"tag": "markdown", "content": t(lang, "reverts", sha=target)}))
    if e.error and (a is None or a.origin != "fallback"):
        blocks.append(Md(t(lang, "unanalysed", reason=e.error), wrap=grey))
    if a is not None:
        blocks += _analysis_blocks(lang, a, full)
    if full and c.body.strip():
        blocks.append(Panel(f"**{md_escape(ft(lang, 'commit_message'))}**", [Md(c.body)], True, ft(lang, "cont")))
    if a is not None and a.coverage is not None:
        blocks.append(Md(f"{t(lang, 'coverage')}：{coverage_line(a.coverage, lang)}", wrap=grey))
    blocks.append(Fixed(_buttons(d, e, thread, with_details=not full)))
    return pack(blocks, header, f"{e.importance.emoji} {c.short_sha} {c.title}", lang)


def _meta_line(d: Digest, e: DigestEntry) -> str:
    c, lang = e.commit, d.lang
    parts = [f"`{c.short_sha}`"]
    if c.url:
        parts.append(link(t(lang, "view_commit"), c.url))
    if (pr_url := d.change_url(c.pr_number)) and c.pr_number:
        parts.append(link(f"{t(lang, d.links.change_word)} {d.links.change_ref(c.pr_number)}", pr_url))
    if mark := L.entry_marks(lang, e):
        parts.append(md_escape(mark))
    return " · ".join(parts)  # the author and time are in the header's subtitle


def _analysis_blocks(lang: str, a: Analysis, full: bool) -> list[Block]:
    cont = ft(lang, "cont")
    blocks: list[Block] = []
    note = L.origin_note(lang, a)
    if note:
        blocks.append(Md(note, wrap=grey))
    kind = (
        f"**{t(lang, 'type')}**：{md_escape(a.change_type.label(lang))} · "
        f"**{t(lang, 'importance')}**：{L.importance_label(lang, a.importance)}"
    )
    if a.importance_reason.strip():
        blocks.append(Md(a.importance_reason, prefix=kind + " — "))
    else:
        blocks.append(Fixed({"tag": "markdown", "content": kind}))
    if a.summary.strip():
        blocks.append(Md(a.summary, prefix=f"**{t(lang, 'summary')}**：\n"))
    if a.impact.strip():
        blocks.append(Md(a.impact, prefix=f"**{t(lang, 'impact')}**：\n"))
    insights = [(k, getattr(a.insights, k)) for k in ("architecture", "performance", "security")]
    items: list[Block] = [Md(v, prefix=f"**{t(lang, k)}**：") for k, v in insights if v and v.strip()]
    if items:
        blocks.append(Panel(f"**{t(lang, 'insights')}**", items, full, cont))
    for key, values in (("risks", a.risks), ("recommendations", a.recommendations)):
        bullet_items: list[Block] = [Md(v, prefix="- ") for v in values if v and v.strip()]
        if bullet_items:
            blocks.append(Panel(f"**{t(lang, key)}** ({len(bullet_items)})", bullet_items, full, cont))
    return blocks


def button_value(action: str, d: Digest, c: Commit, thread: str | None, **extra) -> dict:
    value = {
        "action": action,
        "repo": d.repo_id,
        "sha": c.sha,
        "lang": d.lang,
        "tz": d.window.tz,
        "title": plain(c.title, 80),
    }
    if thread:
        value["thread"] = thread
    value.update(extra)
    return value


def _buttons(d: Digest, e: DigestEntry, thread: str | None, with_details: bool) -> dict:
    lang, c = d.lang, e.commit
    buttons = [button(ft(lang, "ask"), kind="primary", value=button_value("ask", d, c, thread))]
    if with_details:
        buttons.append(button(ft(lang, "details"), value=button_value("details", d, c, thread)))
    url = safe_url(c.url)
    if url:
        buttons.append(button(ft(lang, "view_commit"), url=url))
    if with_details:  # in the digest's thread: the card a level tap redraws
        buttons += [
            button(text(lang, f"levels.{way}"), value=button_value("level", d, c, thread, dir=way))
            for way in ("too_high", "too_low")
        ]
    return row(buttons)


# --- the low commits and the bots -------------------------------------------------------------


def low_cards(
    d: Digest, entries: Sequence[DigestEntry], *, thread: str | None = None, total: int = 0, more: str = ""
) -> list[dict]:
    """The low commits listed, each with its level buttons, and `more` (trusted markdown): the line
    for those not listed."""
    lang = d.lang
    header = Header(L.group_label(lang, Importance.LOW, total or d.count(Importance.LOW)), "green", subtitle=d.repo)
    blocks: list[Block] = []
    for e in entries:
        summary = e.analysis.summary if e.analysis else t(lang, "unanalysed", reason=e.error)
        blocks.append(Md(summary, prefix=_commit_line(d, e) + "\n", wrap=grey, suffix=_corrected_md(d, e, "\n")))
        if e.analysis is not None:
            blocks.append(_level_row(d, e, thread))
    if more:
        blocks.append(Fixed({"tag": "markdown", "content": more}))
    return pack(blocks, header, L.group_label(lang, Importance.LOW, len(entries)), lang)


def _with_link(sentence: str, url: str | None, lang: str) -> str:
    """A catalogue sentence holding labels.LINK as card markdown, the report link where LINK is."""
    before, marker, after = sentence.partition(L.LINK)
    return md_escape(before) + (link(text(lang, "report.link"), url) if marker else "") + md_escape(after)


def bot_cards(d: Digest, groups, *, thread: str | None = None) -> list[dict]:
    """One line per bot; under each, a collapsed panel listing its commits (links) with their level
    buttons, so every collapsed commit stays one click away."""
    lang = d.lang
    header = Header(L.bots_heading(lang, groups), "grey", subtitle=d.repo)
    blocks: list[Block] = []
    for group in groups:
        blocks.append(Md(L.bot_line(lang, group)))
        items: list[Block] = []
        for e in group.entries:
            items.append(Fixed({"tag": "markdown", "content": _commit_line(d, e) + _corrected_md(d, e, "\n")}))
            if e.analysis is not None:
                items.append(_level_row(d, e, thread))
        blocks.append(
            Panel(
                f"**{md_escape(text(lang, 'noise.bots_commits', n=len(group.entries)))}**",
                items,
                False,
                ft(lang, "cont"),
            )
        )
    return pack(blocks, header, L.bots_heading(lang, groups) + " · " + d.repo, lang)


# --- the weekly roll-up ------------------------------------------------------------------------


def week_cards(c: WeekRollup) -> list[dict]:
    """The weekly roll-up: high and medium commits by area with their day, the bots' lines, the
    low ones counted — one card unless Feishu's size limit says otherwise."""
    d, lang = c.digest, c.digest.lang
    header, blocks = _digest_head(d, L.week_title(d), L.week_stats(d))
    if safe_url(c.report_url):
        blocks.append(Fixed(row([button(text(lang, "report.link"), url=safe_url(c.report_url))])))
    blocks += [Md(n) for n in d.notices]
    if d.headline:
        note = " " + grey(md_escape(t(lang, "headline_offline"))) if d.headline_origin != "llm" else ""
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(t(lang, 'headline_heading'))}**{note}"}))
        blocks += [Md(b, prefix="- ") for b in d.headline]
    for area, entries in c.areas:
        blocks.append(Fixed({"tag": "hr"}))
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(L.area_label(lang, area, len(entries)))}**"}))
        for e in entries:
            line = f"{md_escape(L.day_of(d, e.commit))} {_commit_line(d, e)}"
            reason = (
                (e.analysis.importance_reason if e.analysis else e.error) if e.importance is Importance.HIGH else ""
            )
            note = _corrected_md(d, e, "\n")
            blocks.append(
                Md(reason, prefix=line + "\n", wrap=grey, suffix=note)
                if reason
                else Fixed({"tag": "markdown", "content": line + note})
            )
    if not c.areas:
        blocks.append(Md(text(lang, "week.nothing")))
    if c.bots:
        blocks.append(Fixed({"tag": "hr"}))
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(L.bots_heading(lang, c.bots))}**"}))
        blocks += [Md(L.bot_line(lang, g)) for g in c.bots]
    if c.low:
        blocks.append(
            Fixed({"tag": "markdown", "content": _with_link(L.week_low(lang, c.low, c.more_how), c.report_url, lang)})
        )
    return pack(blocks, header, L.week_title(d) + " · " + d.repo, lang)


# --- the upgrade report of a release range -----------------------------------------------------


def upgrade_cards(c: UpgradeReport) -> list[dict]:
    """A range's parent card: what an upgrade must handle first, then features and fixes by area,
    the low commits counted (bot/render/upgrade.py); the thread holds the commits in full."""
    d, lang = c.digest, c.digest.lang
    header, blocks = _digest_head(d, c.title, c.stats)
    if safe_url(c.report_url):
        blocks.append(Fixed(row([button(text(lang, "report.link"), url=safe_url(c.report_url))])))
    blocks += [Md(n) for n in d.notices]
    if d.headline:
        note = " " + grey(md_escape(t(lang, "headline_offline"))) if d.headline_origin != "llm" else ""
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(t(lang, 'headline_heading'))}**{note}"}))
        blocks += [Md(b, prefix="- ") for b in d.headline]
    if c.nothing:
        blocks.append(Md(c.nothing))
    for g in c.groups:
        blocks.append(Fixed({"tag": "hr"}))
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(g.heading)}**"}))
        for e in g.entries:
            line = f"{e.importance.emoji} {link(e.commit.short_sha, e.commit.url)} "
            files = entry_note(g, e, lang)
            blocks.append(Md(entry_text(e), prefix=line, suffix=(" — " + md_escape(files)) if files else ""))
    if c.fork_clear:
        blocks.append(Md(c.fork_clear))
    if c.low_line:
        blocks.append(Md(c.low_line))
    blocks += _owner_blocks(lang, c.owners, c.more_owners)
    return pack(blocks, header, c.title, lang)

"""The chat contents as Slack messages: Block Kit as plain dicts, pure (no SDK, no I/O).

`render(content)` returns a list of payloads `{"text": <notification fallback>, "blocks": [...]}`,
posted in order. Every payload stays inside Block Kit's limits — 50 blocks, 3000 characters per
section, 150 per header, 10 context elements, 25 actions, 75 per button label — and conservatively
under Slack's undocumented cumulative limit (`msg_blocks_too_long` has been seen at ~13k
characters). Content that does not fit is split into more blocks or continuation payloads, never
cut.

Untrusted text (commit titles, bodies, authors, LLM output, anything a user typed) goes through
`esc`: `&`, `<`, `>` become entities, so `<!channel>`, `<@U…>`, `<!subteam^…>` and `<url|label>`
render as inert text; bare `@channel`/`@here`/`@everyone` get a zero-width joiner; `](` gets a
zero-width space so Markdown surfaces (streams) cannot form a link either. The only `<url|label>`
links are the ones built here from URLs the bot itself knows (commit, PR, reverted commit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

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
    WeekRollup,
    chunk_text,
    entries_at_least,
)
from ..core.models import Analysis, Commit, Digest, DigestEntry, Importance
from ..diffs import coverage_line
from ..i18n import text
from . import fork_section as DS
from . import labels as L
from .labels import t
from .safe import strip_controls

# --- Slack's limits (and our safety margins) --------------------------------------------------------

MAX_BLOCKS = 50
SECTION_CHARS = 3000
HEADER_CHARS = 150
CONTEXT_ELEMENTS = 10
ACTIONS_ELEMENTS = 25
BUTTON_CHARS = 75
OPTION_CHARS = 75
OPTION_VALUE_CHARS = 150
SELECT_OPTIONS = 100
BLOCK_ID_CHARS = 255
VALUE_CHARS = 2000
MESSAGE_BYTES = 11000  # cumulative JSON size of one message's blocks, in UTF-8 bytes: Slack refused ~13k
# and does not say whether it counts characters or bytes; CJK text is 3 bytes a character
PAGE_BLOCKS = MAX_BLOCKS - 2  # room for the continuation marker
FALLBACK_CHARS = 300  # the notification text: a preview, the blocks carry everything
LOW_PER_PAGE = 20

ACTION_ASK = "digest_ask"
ACTION_DETAILS = "digest_details"
ACTION_CHOOSE = "digest_choose"  # one button per commit: digest_choose_0, digest_choose_1, …
ACTION_CHOOSE_PATTERN = re.compile(r"^digest_choose(?:_\d+)?$")  # action_ids are unique per message
ACTION_LOW = "digest_low"
# A reader's level correction: two buttons under a commit's detail (the direction in the action_id,
# one of each per message), and a menu beside the low commits' / bots' menu.
ACTION_LEVEL = "digest_level"
ACTION_LEVEL_PATTERN = re.compile(r"^digest_level_(too_high|too_low)$")
ACTION_LEVEL_MENU = "digest_level_menu"
DIRECTIONS = ("too_high", "too_low")
MODAL_CALLBACK = "digest_ask_modal"
MODAL_BLOCK = "question"
MODAL_INPUT = "question"


def s(lang: str, key: str, **values) -> str:
    """A Slack-only word (buttons, continuation markers, the question form) from the catalogue's
    [cards.slack]; the digest's own words come from labels.py so every renderer says the same."""
    return text(lang, f"cards.slack.{key}", **values)


# --- escaping ------------------------------------------------------------------------------------------

_BROADCAST = re.compile(r"@(?=(?:channel|here|everyone)\b)", re.IGNORECASE)
ZWJ = "\u200d"
ZWSP = "\u200b"


def esc(text: object) -> str:
    """The one escape for untrusted text in any Slack text field (mrkdwn, plain_text, markdown)."""
    out = strip_controls(text)
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _BROADCAST.sub("@" + ZWJ, out)
    return out.replace("](", "]" + ZWSP + "(")


def unescape(text: str) -> str:
    """What a reader sees (for tests and for measuring): entities decoded, zero-width marks dropped."""
    return text.replace(ZWJ, "").replace(ZWSP, "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def md_to_mrkdwn(text: str) -> str:
    """LLM prose uses Markdown's **bold**; Slack's mrkdwn bolds with single asterisks."""
    return re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"*\1*", text)


def _safe_url(url: str | None) -> str | None:
    """Only http(s) URLs without characters that could end or split Slack's <url|label> syntax."""
    if not url or not re.match(r"^https?://[^\s<>|]+$", url):
        return None
    return url.replace("&", "&amp;")


def link(url: str | None, label: str) -> str:
    """A link the bot itself builds; `label` must already be escaped. No safe URL: the label alone."""
    safe = _safe_url(url)
    return f"<{safe}|{label}>" if safe else label


_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")


def mention(user: str) -> str:
    """A Slack user id becomes a mention; anything else is shown as escaped text."""
    return f"<@{user}>" if _USER_ID.match(user or "") else esc(user)


def colon(lang: str) -> str:
    return "：" if lang == "zh" else ": "


def guess_lang(text: str) -> str:
    """For contents that carry no language (AnswerHeader, Notice): CJK text → zh."""
    return "zh" if re.search(r"[\u3400-\u9fff]", text or "") else "en"


# --- splitting ----------------------------------------------------------------------------------------

_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$")


def split_text(text: str, limit: int) -> list[str]:
    """`chunk_text` for already-escaped text: never cut inside an entity like `&amp;`."""
    pieces = chunk_text(text, max(1, limit - 4))
    out: list[str] = []
    carry = ""
    for piece in pieces:
        piece = carry + piece
        carry = ""
        m = _PARTIAL_ENTITY.search(piece)
        if m and m.start() > 0:
            carry, piece = piece[m.start() :], piece[: m.start()]
        out.append(piece)
    if carry:
        out.append(carry)
    return [p for p in out if p] or [""]


def _clip_label(text: str, limit: int) -> str:
    """Button and option labels are handles, not content (the full text is in the message):
    shorten them visibly with '…'."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def fit_label(raw: str, limit: int) -> str:
    """An escaped label of at most `limit` characters (escaping may lengthen it: clip first).
    The longest clip that fits, one character at a time: jumping by the overflow shortened labels far
    more than needed, and a hard cut at `limit` dropped the '…' and could split an entity."""
    for keep in range(limit, 0, -1):
        out = esc(_clip_label(raw, keep))
        if len(out) <= limit:
            return out
    return "…"  # only for limit < 1


# --- block builders ----------------------------------------------------------------------------------


def mrkdwn(text: str) -> dict:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def plain(text: str) -> dict:
    return {"type": "plain_text", "text": text, "emoji": True}


def sections(text: str, label: str | None = None) -> list[dict]:
    """One or more sections holding `text` (escaped already); `label` (bold) heads the first."""
    head = f"*{label}*\n" if label else ""
    if not text.strip():
        return [{"type": "section", "text": mrkdwn(head.strip() or " ")}] if label else []
    pieces = split_text(text, SECTION_CHARS - len(head))
    blocks = [{"type": "section", "text": mrkdwn(head + pieces[0])}]
    blocks += [{"type": "section", "text": mrkdwn(p)} for p in pieces[1:]]
    return blocks


def packed_sections(lines: Iterable[str], label: str | None = None) -> list[dict]:
    """Lines packed into as few sections as fit (a long line is split on its own)."""
    blocks: list[dict] = []
    current = f"*{label}*" if label else ""
    for line in lines:
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= SECTION_CHARS:
            current = candidate
            continue
        if current:
            blocks.append({"type": "section", "text": mrkdwn(current)})
        if len(line) <= SECTION_CHARS:
            current = line
        else:
            blocks += sections(line)
            current = ""
    if current:
        blocks.append({"type": "section", "text": mrkdwn(current)})
    return blocks


def context(*texts: str) -> list[dict]:
    """Small grey lines; more than fits in one context block (10 elements, short texts) become
    further context blocks or sections — nothing is dropped."""
    texts = tuple(x for x in texts if x and x.strip())
    blocks: list[dict] = []
    short = [x for x in texts if len(x) <= 2000]
    for i in range(0, len(short), CONTEXT_ELEMENTS):
        blocks.append({"type": "context", "elements": [mrkdwn(x) for x in short[i : i + CONTEXT_ELEMENTS]]})
    for x in texts:
        if len(x) > 2000:
            blocks += sections(x)
    return blocks


def header(text: str) -> list[dict]:
    """A header when it fits in 150 characters, else a bold section (headers cannot be split)."""
    if len(text) <= HEADER_CHARS:
        return [{"type": "header", "text": plain(text)}]
    return sections(f"*{text}*")


def button(raw_text: str, action_id: str, value: str, style: str | None = None) -> dict:
    b = {"type": "button", "text": plain(fit_label(raw_text, BUTTON_CHARS)), "action_id": action_id, "value": value}
    if style:
        b["style"] = style
    return b


def actions(elements: Sequence[dict]) -> list[dict]:
    return [
        {"type": "actions", "elements": list(elements[i : i + ACTIONS_ELEMENTS])}
        for i in range(0, len(elements), ACTIONS_ELEMENTS)
    ]


def _dumps(value: dict) -> str:
    """Compact JSON whose text holds no `<`, `>`, `&`, `@` or `](` (JSON \\u escapes decode to the
    same value), so not even a hidden button value carries mention, broadcast or link syntax."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch in "<>&@":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text.replace("](", "\\u005d(")  # a structural ] is never followed by (


def compact_json(value: dict, limit: int, optional: Sequence[str] = ()) -> str:
    """JSON for a button value / block id; drops optional keys (in order) until it fits."""
    value = {k: v for k, v in value.items() if v not in (None, "")}
    text = _dumps(value)
    for key in optional:
        if len(text) <= limit:
            break
        value.pop(key, None)
        text = _dumps(value)
    if len(text) > limit:
        raise ValueError(f"payload of {len(text)} characters does not fit in {limit}")
    return text


def block_size(block: dict) -> int:
    """A block's size as Slack may count it: its JSON in UTF-8 bytes."""
    return len(json.dumps(block, ensure_ascii=False).encode("utf-8"))


# --- pagination --------------------------------------------------------------------------------------


def paginate(blocks: list[dict], fallback: str, lang: str, tail: Sequence[dict] = ()) -> list[dict]:
    """Cut a logical message into payloads within the block and size limits; `tail` (buttons)
    ends the last payload. Continuation payloads start with a '(continued i/n)' marker."""
    pages: list[list[dict]] = [[]]
    size = 0
    for block in list(blocks) + list(tail):
        n = block_size(block)
        if pages[-1] and (len(pages[-1]) >= PAGE_BLOCKS or size + n > MESSAGE_BYTES):
            pages.append([])
            size = 0
        pages[-1].append(block)
        size += n
    return _finish(pages, fallback, lang)


def _finish(pages: list[list[dict]], fallback: str, lang: str) -> list[dict]:
    total = len(pages)
    preview = _clip_label(fallback, FALLBACK_CHARS)
    payloads = []
    for i, page in enumerate(pages, 1):
        if i > 1:
            marker = s(lang, "continued", i=i, n=total)
            page = context(f"{esc(_clip_label(preview, 200))} {marker}") + page
            text = f"{preview} {marker}"
        else:
            text = preview
        payloads.append({"text": esc(text), "blocks": page})
    return payloads


# --- button values -------------------------------------------------------------------------------


def commit_value(d: Digest, commit: Commit, thread: str | None) -> str:
    """What the Ask / Details buttons carry back: {repo, sha, lang, tz, thread?} (≤2000)."""
    return compact_json(
        {"repo": d.repo_id, "sha": commit.sha, "lang": d.lang, "tz": d.window.tz, "thread": thread},
        VALUE_CHARS,
        optional=("thread", "tz"),
    )


def parse_value(raw: str | None) -> dict:
    try:
        value = json.loads(raw or "")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --- the contents ---------------------------------------------------------------------------------


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
    if isinstance(content, CommitChoice):
        return render_choice(content, thread=thread)
    if isinstance(content, AnswerHeader):
        return render_answer_header(content)
    raise TypeError(f"cannot render {type(content).__name__} for Slack")


def render_notice(n: Notice) -> list[dict]:
    text = esc(n.text) if n.text.strip() else "…"
    return paginate(sections(text), n.text.split("\n", 1)[0] or "…", n.lang or guess_lang(n.text))


def render_parent(c: DigestParent) -> list[dict]:
    d, lang = c.digest, c.digest.lang
    title = f"{L.title(d)} · {d.repo}"
    blocks = header(esc(title))
    blocks += context(
        esc(t(lang, "meta", branch=d.branch or "-", tz=d.window.tz, n=len(d.entries))), esc(L.filter_line(d))
    )
    blocks += sections(esc(L.stats_line(d)))
    if spent := cost_line(d.cost, lang):  # what its LLM analyses cost
        blocks += context(esc(spent))
    if _safe_url(c.report_url):  # the full report page, near the top where it is seen
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
    if d.fork and d.entries:
        lines = [esc(DS.intro(d))] + [
            f"{link(e.commit.url, f'`{e.commit.short_sha}`')} *{esc(e.commit.title)}* — {esc(DS.line(d, e.downstream))}"
            for e in DS.flagged(d)
        ]
        blocks += packed_sections(lines, label=esc(DS.heading(d)))
    return paginate(blocks, f"{title} — {L.stats_line(d)}", lang)


def _high_line(d: Digest, e: DigestEntry) -> str:
    c = e.commit
    reason = e.analysis.importance_reason if e.analysis else e.error
    line = f"{e.importance.emoji} {link(c.url, f'`{c.short_sha}`')} *{esc(c.title)}*"
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


def _meta_line(d: Digest, c: Commit) -> str:
    lang = d.lang
    parts = [link(c.url, f"`{c.short_sha}`")]
    if c.url:
        parts.append(link(c.url, esc(t(lang, "view_commit"))))
    if c.pr_number and d.repo_url:
        parts.append(f"{t(lang, 'pr')} {link(f'{d.repo_url}/pull/{c.pr_number}', f'#{c.pr_number}')}")
    parts.append(f"{esc(t(lang, 'author'))} {esc(c.author)}")
    parts.append(c.local_time(d.window.tz).strftime("%Y-%m-%d %H:%M"))
    return " · ".join(parts)


def _commit_blocks(d: Digest, e: DigestEntry, full: bool) -> list[dict]:
    lang, c, a = d.lang, e.commit, e.analysis
    blocks = sections(f"{e.importance.emoji} *{esc(c.title)}*")
    blocks += context(_meta_line(d, c), corrected(d, e))
    if flag := DS.flag(d, e):
        blocks += sections(f"*{esc(flag)}*")
    if c.reverts:
        url = f"{d.repo_url}/commit/{c.reverts}" if d.repo_url else None
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
    return _finish(pages, f"{unescape(label)} · {d.repo}", lang)


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


def render_week(c: WeekRollup) -> list[dict]:
    """The weekly roll-up: one message (continued only past Slack's size limit)."""
    d, lang = c.digest, c.digest.lang
    title = f"{L.week_title(d)} · {d.repo}"
    blocks = header(esc(title))
    blocks += context(
        esc(t(lang, "meta", branch=d.branch or "-", tz=d.window.tz, n=len(d.entries))), esc(L.filter_line(d))
    )
    blocks += sections(esc(L.week_stats(d)))
    if _safe_url(c.report_url):
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


def _week_line(d: Digest, e: DigestEntry) -> str:
    c = e.commit
    line = f"{e.importance.emoji} {esc(L.day_of(d, c))} {link(c.url, f'`{c.short_sha}`')} {esc(c.title)}"
    if e.importance is Importance.HIGH:
        reason = e.analysis.importance_reason if e.analysis else e.error
        line += f" — {md_to_mrkdwn(esc(reason))}" if reason else ""
    return line + _corrected_tail(d, e)


def render_choice(c: CommitChoice, *, thread: str | None = None) -> list[dict]:
    lang = c.lang
    blocks = sections(f"*{esc(s(lang, 'choose'))}*\n>{esc(' '.join(c.question.split()))}")
    blocks += packed_sections([f"• {link(x.url, f'`{x.short_sha}`')} {esc(x.title)}" for x in c.commits])
    buttons = []
    for i, commit in enumerate(c.commits):
        repo = c.repo_of[i] if i < len(c.repo_of) else commit.repo
        value = compact_json(
            {"repo": repo, "sha": commit.sha, "thread": thread, "question": c.question},
            VALUE_CHARS,
            optional=("thread", "question"),
        )
        buttons.append(button(f"{commit.short_sha} {commit.title}", f"{ACTION_CHOOSE}_{i}", value))
    return paginate(blocks, s(lang, "choose"), lang, tail=actions(buttons))


def render_answer_header(c: AnswerHeader) -> list[dict]:
    lang = c.lang or guess_lang(c.question)
    commit = c.commit
    text = s(lang, "asked", user=mention(c.user), question=esc(" ".join(c.question.split())))
    blocks = sections(text)
    if commit is not None:
        blocks += context(f"{link(commit.url, f'`{commit.short_sha}`')} {esc(commit.title)}")
    fallback = s(lang, "asked", user="", question=c.question).replace("  ", " ")
    return paginate(blocks, fallback, lang)


# --- the question form (the Ask button) ----------------------------------------------------------------


def ask_modal(value: dict, metadata: str) -> dict:
    """views.open payload: one multi-line input for the question. `metadata` (≤3000) carries
    the button's value and where the answer goes."""
    lang = value.get("lang") or "en"
    sha = str(value.get("sha", ""))[:7]
    return {
        "type": "modal",
        "callback_id": MODAL_CALLBACK,
        "private_metadata": metadata,
        "title": plain(fit_label(s(lang, "modal_title"), 24)),
        "submit": plain(s(lang, "modal_submit")),
        "close": plain(s(lang, "modal_close")),
        "blocks": [
            {
                "type": "context",
                "elements": [
                    mrkdwn(
                        esc(s(lang, "modal_commit", sha=f"`{sha}`"))
                        + (f" · {esc(value['repo'])}" if value.get("repo") else "")
                    )
                ],
            },
            {
                "type": "input",
                "block_id": MODAL_BLOCK,
                "label": plain(s(lang, "modal_label")),
                "element": {
                    "type": "plain_text_input",
                    "action_id": MODAL_INPUT,
                    "multiline": True,
                    "max_length": 2000,
                    "placeholder": plain(s(lang, "modal_hint")),
                },
            },
        ],
    }


def plain_texts(payload: dict) -> list[str]:
    """Every string shown to a reader in a payload (tests, and the fake's limit checks)."""
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(payload)
    return found

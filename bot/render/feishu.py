"""Feishu/Lark interactive cards (card JSON 2.0) for every chat content type. Pure: content in,
a list of card dicts out — one card per Feishu message.

Native to Feishu: a coloured header with importance tags, collapsible panels for the long parts
of an analysis, buttons whose callbacks carry what the conversation core needs, a form for
questions, and a streaming card for answers.

Limits: Feishu's 30 KB is the *request body* (create, reply, patch, CardKit create), where the card
JSON travels as an escaped string: every `"` and newline of the card costs one more byte there.
So we measure the card as that escaped string (`body_bytes`) and fill up to `CARD_BUDGET`, which
leaves room for the rest of the body (receive_id, msg_type, uuid) and a margin; whatever does not
fit continues on the next card — nothing is ever dropped or cut.

Escaping: commit text, LLM output and user input reach `markdown` elements only through
`md_escape`, which leaves them unable to mention anyone (`<at id=all>`), link anywhere
(`[label](url)`, `<a>`, `<link>`, bare URLs), embed images or break out of a code block. The only
links on a card are the ones this module builds from commit and PR URLs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

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

MAX_BODY_BYTES = 30 * 1024  # Feishu rejects larger request bodies for cards (error 230025)
MAX_CARD_BYTES = MAX_BODY_BYTES  # kept for callers of the old name
# What we fill a card up to, measured escaped (`body_bytes`): ~2.7 KB left for the body's other
# fields (≤ 200 bytes) and for Feishu's own accounting (style tags are said to count extra).
CARD_BUDGET = 28_000
MAX_NODES = 120  # components per card (nested ones included): well inside Feishu's limit
ANSWER_ELEMENT = "answer"  # element_id of the streamed markdown element

IMPORTANCE_COLOUR = {Importance.HIGH: "red", Importance.MEDIUM: "orange", Importance.LOW: "green"}


def ft(lang: str, key: str, **values) -> str:
    """A word only the Feishu cards need, from the catalogue's [cards.feishu] (the shared ones
    come from labels.py)."""
    return text(lang, f"cards.feishu.{key}", **values)


# --- escaping ------------------------------------------------------------------------------------

# Feishu's card Markdown documents numeric escapes only; named ones (&lt;) may show literally.
_ENTITIES = str.maketrans({"&": "&#38;", "<": "&#60;", ">": "&#62;"})
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([A-Za-z0-9_+.#-]{0,20})")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_ZWSP = "\u200b"
_AT_WORD = re.compile(r"@(?=\w)")


def clean(text: object) -> str:
    """Text without control characters or bidi overrides (they can hide or reorder what is shown)."""
    return strip_controls(text)


def plain(text: object, limit: int | None = None) -> str:
    """One line for a plain_text field (headers, button labels). Plain text renders literally; a
    limit shortens labels only — the full text is always in a markdown element too."""
    line = " ".join(clean(text).split())
    if limit and len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def md_escape(text: object) -> str:
    """Untrusted text → content for a `markdown` / `lark_md` element.

    Prose: `&`, `<`, `>` become numeric entities (`&#38;` `&#60;` `&#62;`), so no tag (`<at id=all>`, `<a>`, `<link>`, `<font>`)
    and no entity (`&#60;at …`) can form; a zero-width space after every `]`, inside `://` and
    after an `@` that starts a word keeps `[x](url)`, bare URLs and `@all` from becoming links or
    mentions while they still read the same. Emphasis, lists and headings stay (harmless).
    Code spans and fenced blocks keep their code verbatim except for the same zero-width breaks
    (`<` before a letter, `&` before an entity, `](`, `://`, `@word`), and an unterminated fence is
    closed so nothing after it is swallowed.
    """
    out: list[str] = []
    fence: str | None = None
    for line in clean(text).split("\n"):
        opener = _FENCE.match(line)
        if fence is None:
            if opener:
                fence = opener.group(1)
                out.append("```" + opener.group(2))
            else:
                out.append(_escape_line(line))
        elif opener and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            fence = None
            out.append("```")
        else:
            out.append(_neutralise_code(line.replace("```", "ʼʼʼ")))
    if fence is not None:
        out.append("```")
    return "\n".join(out)


def _escape_line(line: str) -> str:
    parts: list[str] = []
    pos = 0
    for match in _INLINE_CODE.finditer(line):
        parts.append(_escape_prose(line[pos : match.start()]))
        parts.append("`" + _neutralise_code(match.group(2).replace("`", "ʼ")) + "`")
        pos = match.end()
    parts.append(_escape_prose(line[pos:]))
    return "".join(parts)


def _escape_prose(text: str) -> str:
    text = text.translate(_ENTITIES).replace("]", "]" + _ZWSP).replace("://", ":/" + _ZWSP + "/")
    return _AT_WORD.sub("@" + _ZWSP, text)


def _neutralise_code(text: str) -> str:
    text = re.sub(r"<(?=[A-Za-z/!?])", "<" + _ZWSP, text)
    text = re.sub(r"&(?=#?\w+;)", "&" + _ZWSP, text)
    text = text.replace("](", "]" + _ZWSP + "(").replace("://", ":/" + _ZWSP + "/")
    return _AT_WORD.sub("@" + _ZWSP, text)


def fence_opener(raw: str) -> str:
    """The fence line to reopen when `raw` ends inside a fenced block ('' when it does not)."""
    fence: str | None = None
    opener_line = ""
    for line in clean(raw).split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence, opener_line = m.group(1), "```" + m.group(2)
        elif fence is not None and m and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            fence = None
    return opener_line + "\n" if fence is not None else ""


def safe_url(url: str | None) -> str | None:
    """A URL the bot built (commit, PR), fit for `[label](url)`; None when it is not http(s)."""
    if not url or not re.match(r"^https?://[^\s]+$", url):
        return None
    return url.replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def link(label: str, url: str | None) -> str:
    """`label` (escaped) linked to a bot-built URL, or just the label."""
    target = safe_url(url)
    return f"[{md_escape(label)}]({target})" if target else md_escape(label)


def grey(markdown: str) -> str:
    return f"<font color='grey'>{markdown}</font>"


# --- sizes ---------------------------------------------------------------------------------------


def card_json(card: dict) -> str:
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


def card_bytes(card: dict) -> int:
    """The compact card JSON's UTF-8 size (not what Feishu limits: see `body_bytes`)."""
    return len(card_json(card).encode("utf-8"))


def escaped_bytes(text: str) -> int:
    """UTF-8 size of `text` as a JSON string value (quotes excluded), as the SDK serialises it
    (`ensure_ascii=False`: a CJK character stays 3 bytes; `"`, `\\` and newlines double)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


def body_bytes(card: dict) -> int:
    """What the card costs inside a request body, where it is an escaped string."""
    return escaped_bytes(card_json(card))


def request_bytes(body: dict) -> int:
    """The UTF-8 size of a request body as lark-oapi sends it (json.dumps, ensure_ascii=False)."""
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8"))


def _nodes(element: dict) -> int:
    inner = element.get("elements") or []
    columns = element.get("columns") or []
    return 1 + sum(_nodes(e) for e in inner) + sum(_nodes(c) for c in columns)


# --- building blocks (splittable when one alone would not fit a card) ----------------------------


class Block:
    def element(self) -> dict:
        raise NotImplementedError

    def split(self) -> list[Block]:
        """Smaller blocks carrying everything this one carries ([] when it cannot shrink)."""
        return []


@dataclass
class Fixed(Block):
    el: dict

    def element(self) -> dict:
        return self.el


@dataclass
class Md(Block):
    """`prefix` (trusted markdown) + `raw` (untrusted, escaped here) + `suffix` (trusted)."""

    raw: str
    prefix: str = ""
    suffix: str = ""
    wrap: Callable[[str], str] | None = None  # e.g. grey()

    def element(self) -> dict:
        body = md_escape(self.raw)
        if self.wrap:
            body = self.wrap(body)
        return {"tag": "markdown", "content": f"{self.prefix}{body}{self.suffix}"}

    def split(self) -> list[Block]:
        if len(self.raw) < 2:
            return []
        pieces = chunk_text(self.raw, max(1, (len(self.raw) + 1) // 2))
        if len(pieces) < 2:
            return []
        opener = fence_opener(pieces[0])
        first = Md(pieces[0], self.prefix, "", self.wrap)
        rest = [Md(opener + p, "", "", self.wrap) for p in pieces[1:]]
        rest[-1].suffix = self.suffix
        return [first, *rest]


@dataclass
class Panel(Block):
    """A collapsible panel: title (trusted markdown) over items."""

    title: str
    items: list[Block]
    expanded: bool = False
    cont: str = ""  # appended to the title of a continuation panel

    def element(self) -> dict:
        return {
            "tag": "collapsible_panel",
            "expanded": self.expanded,
            "header": {
                "title": {"tag": "markdown", "content": self.title},
                "vertical_align": "center",
                "icon": {"tag": "standard_icon", "token": "down-small-ccm_outlined", "size": "16px 16px"},
                "icon_position": "right",
                "icon_expanded_angle": -180,
            },
            "border": {"color": "grey", "corner_radius": "5px"},
            "vertical_spacing": "8px",
            "padding": "8px 8px 8px 8px",
            "elements": [item.element() for item in self.items],
        }

    def _continued(self) -> str:
        """The title of a continuation panel (marked once: a continuation split again is not
        "(cont.) (cont.)")."""
        return self.title if self.title.endswith(self.cont) else self.title + self.cont

    def split(self) -> list[Block]:
        if len(self.items) > 1:
            half = len(self.items) // 2
            return [
                Panel(self.title, self.items[:half], self.expanded, self.cont),
                Panel(self._continued(), self.items[half:], self.expanded, self.cont),
            ]
        if self.items:
            parts = self.items[0].split()
            if parts:
                return [
                    Panel(self.title if i == 0 else self._continued(), [p], self.expanded, self.cont)
                    for i, p in enumerate(parts)
                ]
        return []


# --- cards ---------------------------------------------------------------------------------------


@dataclass
class Header:
    title: str
    template: str = "blue"
    subtitle: str = ""
    tags: list[tuple[str, str]] = field(default_factory=list)  # (text, colour)

    def element(self, suffix: str = "") -> dict:
        header: dict = {
            "title": {"tag": "plain_text", "content": plain(self.title) + suffix},
            "template": self.template,
        }
        if self.subtitle:
            header["subtitle"] = {"tag": "plain_text", "content": plain(self.subtitle)}
        if self.tags:
            header["text_tag_list"] = [
                {"tag": "text_tag", "text": {"tag": "plain_text", "content": plain(text)}, "color": colour}
                for text, colour in self.tags[:3]
            ]
        return header


def card(elements: list[dict], header: dict | None = None, summary: str = "", *, streaming: bool = False) -> dict:
    config: dict = {"update_multi": True}
    if summary:
        config["summary"] = {"content": plain(summary, 120)}
    if streaming:
        config["streaming_mode"] = True
        config["streaming_config"] = {
            "print_frequency_ms": {"default": 30},
            "print_step": {"default": 2},
            "print_strategy": "fast",
        }
    result: dict = {"schema": "2.0", "config": config}
    if header is not None:
        result["header"] = header
    result["body"] = {"elements": elements}
    return result


def pack(
    blocks: Sequence[Block], header: Header | None, summary: str, lang: str, budget: int = CARD_BUDGET
) -> list[dict]:
    """Place the blocks on as few cards as fit the budget, in order, splitting a block that alone
    would not fit. Continuation cards repeat the header with a (2/3) suffix."""
    head = header.element(ft(lang, "page", i=99, n=99)) if header else None
    base = body_bytes(card([], head, summary))
    pages: list[list[dict]] = [[]]
    sizes = [0]
    nodes = [0]
    queue = list(blocks)
    while queue:
        block = queue.pop(0)
        el = block.element()
        size, count = escaped_bytes(card_json(el)) + 1, _nodes(el)  # + the comma
        if base + sizes[-1] + size <= budget and nodes[-1] + count <= MAX_NODES:
            pages[-1].append(el)
            sizes[-1] += size
            nodes[-1] += count
            continue
        if pages[-1] and base + size <= budget and count <= MAX_NODES:
            pages.append([el])
            sizes.append(size)
            nodes.append(count)
            continue
        parts = block.split()
        if not parts:
            raise ValueError("a card element cannot be split to fit Feishu's card size limit")
        queue[:0] = parts
    total = len(pages)
    cards = []
    for i, elements in enumerate(pages, 1):
        suffix = ft(lang, "page", i=i, n=total) if total > 1 else ""
        cards.append(card(elements, header.element(suffix) if header else None, summary))
    for c in cards:
        if body_bytes(c) > budget:  # cannot happen with the accounting above; never send one
            raise ValueError("a rendered Feishu card exceeds the request-body budget")
    return cards


# --- content types ----------------------------------------------------------------------------


def render_cards(content: Content, *, thread: str | None = None, lang: str = "zh") -> list[dict]:
    """Feishu cards for one piece of chat content. `thread` (the thread the cards go to) is put in
    button payloads; `lang` is used by contents that carry no language of their own."""
    if isinstance(content, Notice):
        return notice_cards(content.text, content.lang or lang)
    if isinstance(content, DigestParent):
        return digest_cards(content.digest, content.report_url)
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


def digest_cards(d: Digest, report_url: str | None = None) -> list[dict]:
    lang = d.lang
    header, blocks = _digest_head(d, L.title(d), L.stats_line(d))
    if spent := cost_line(d.cost, lang):  # what its LLM analyses cost
        blocks.append(Fixed({"tag": "markdown", "content": grey(md_escape(spent))}))
    if safe_url(report_url):  # the full report page, a button near the top
        blocks.append(Fixed(_row([_button(text(lang, "report.link"), url=safe_url(report_url))])))
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
    if d.fork and d.entries:
        blocks.append(Fixed({"tag": "hr"}))
        blocks.append(Fixed({"tag": "markdown", "content": f"**{md_escape(DS.heading(d))}**"}))
        blocks.append(Md(DS.intro(d)))
        blocks += [Md(DS.line(d, e.downstream), prefix=_commit_line(d, e) + "\n") for e in DS.flagged(d)]
    if d.entries:
        blocks.append(Fixed({"tag": "markdown", "content": grey(md_escape(ft(lang, "thread_hint")))}))
    return pack(blocks, header, L.title(d) + " · " + d.repo, lang)


def _commit_line(d: Digest, e: DigestEntry) -> str:
    """`🔴 **title** · abc1234 · PR #12` with the bot-built links."""
    c = e.commit
    parts = [f"{e.importance.emoji} **{md_escape(plain(c.title))}**", link(c.short_sha, c.url)]
    if c.pr_number and d.repo_url:
        parts.append(link(f"{t(d.lang, 'pr')} #{c.pr_number}", f"{d.repo_url}/pull/{c.pr_number}"))
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
        _row(
            [
                _button(
                    text(d.lang, f"levels.{way}"),
                    value=button_value("level", d, e.commit, thread, dir=way),
                    size="small",
                )
                for way in ("too_high", "too_low")
            ]
        )
    )


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
        target = link(c.reverts[:7], f"{d.repo_url}/commit/{c.reverts}" if d.repo_url else None)
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
    if c.pr_number and d.repo_url:
        parts.append(link(f"{t(lang, 'pr')} #{c.pr_number}", f"{d.repo_url}/pull/{c.pr_number}"))
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


def _button(
    text: str,
    *,
    kind: str = "default",
    value: dict | None = None,
    url: str | None = None,
    width: str = "default",
    size: str = "medium",
) -> dict:
    behaviour = {"type": "open_url", "default_url": url} if url else {"type": "callback", "value": value or {}}
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": plain(text, 60)},
        "type": kind,
        "width": width,
        "size": size,
        "behaviors": [behaviour],
    }


def _row(buttons: list[dict]) -> dict:
    return {
        "tag": "column_set",
        "flex_mode": "flow",
        "horizontal_spacing": "8px",
        "columns": [{"tag": "column", "width": "auto", "elements": [b]} for b in buttons],
    }


def _buttons(d: Digest, e: DigestEntry, thread: str | None, with_details: bool) -> dict:
    lang, c = d.lang, e.commit
    buttons = [_button(ft(lang, "ask"), kind="primary", value=button_value("ask", d, c, thread))]
    if with_details:
        buttons.append(_button(ft(lang, "details"), value=button_value("details", d, c, thread)))
    url = safe_url(c.url)
    if url:
        buttons.append(_button(ft(lang, "view_commit"), url=url))
    if with_details:  # in the digest's thread: the card a level tap redraws
        buttons += [
            _button(text(lang, f"levels.{way}"), value=button_value("level", d, c, thread, dir=way))
            for way in ("too_high", "too_low")
        ]
    return _row(buttons)


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


def week_cards(c: WeekRollup) -> list[dict]:
    """The weekly roll-up: high and medium commits by area with their day, the bots' lines, the
    low ones counted — one card unless Feishu's size limit says otherwise."""
    d, lang = c.digest, c.digest.lang
    header, blocks = _digest_head(d, L.week_title(d), L.week_stats(d))
    if safe_url(c.report_url):
        blocks.append(Fixed(_row([_button(text(lang, "report.link"), url=safe_url(c.report_url))])))
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


def choice_cards(choice: CommitChoice, *, thread: str | None, lang: str) -> list[dict]:
    header = Header(ft(lang, "choose"), "wathet")
    blocks: list[Block] = [Md(choice.question, prefix=f"**{ft(lang, 'question')}**：")]
    buttons = []
    for i, c in enumerate(choice.commits):
        value = {
            "action": "choose",
            "sha": c.sha,
            "question": choice.question,
            "lang": lang,
            "title": plain(c.title, 80),
        }
        if i < len(choice.repo_of):
            value["repo"] = choice.repo_of[i]
        if thread:
            value["thread"] = thread
        blocks.append(Md(c.title, prefix=f"{link(c.short_sha, c.url)} "))
        buttons.append(_button(f"{c.short_sha} · {plain(c.title)}", value=value, width="fill"))
    blocks.append(Fixed({"tag": "markdown", "content": md_escape(ft(lang, "choose_hint"))}))
    blocks += [Fixed(b) for b in buttons]
    return pack(blocks, header, ft(lang, "choose"), lang)


_OPEN_ID = re.compile(r"^ou_[A-Za-z0-9_-]{1,64}$")


def mention(user: str) -> str:
    """A mention of the asking user (an open_id from Feishu's own event), never anything else."""
    return f"<at id={user}></at>" if _OPEN_ID.match(user or "") else md_escape(user)


def answer_header_cards(h: AnswerHeader, lang: str) -> list[dict]:
    colon = "：" if lang == "zh" else ": "
    parts = [Md(h.question, prefix=f"❓ {mention(h.user)}{colon}")]
    if h.commit is not None:
        parts.append(Md(h.commit.title, prefix=f"{link(h.commit.short_sha, h.commit.url)} ", wrap=grey))
    return pack(parts, None, h.question, lang)


# --- questions and answers ---------------------------------------------------------------------


def ask_form_card(value: dict, lang: str) -> dict:
    """The Ask button's form, posted in the commit's thread: one input and a submit button whose
    callback carries the commit (the typed question arrives as `form_value.question`)."""
    sha = str(value.get("sha", ""))[:7]
    title = str(value.get("title", ""))
    submit = {**{k: v for k, v in value.items() if k != "action"}, "action": "ask_submit"}
    form = {
        "tag": "form",
        "name": "ask_form",
        "elements": [
            {"tag": "markdown", "content": md_escape(ft(lang, "form_hint", sha=sha, title=plain(title)))},
            {
                "tag": "input",
                "name": "question",
                "required": True,
                "width": "fill",
                "max_length": 1000,
                "input_type": "multiline_text",
                "rows": 3,
                "auto_resize": True,
                "max_rows": 8,
                "placeholder": {"tag": "plain_text", "content": ft(lang, "form_placeholder")},
            },
            {
                "tag": "button",
                "name": "ask_submit",
                "form_action_type": "submit",
                "type": "primary",
                "text": {"tag": "plain_text", "content": ft(lang, "submit")},
                "behaviors": [{"type": "callback", "value": submit}],
            },
        ],
    }
    return card([form], Header(ft(lang, "form_title", sha=sha), "wathet").element(), ft(lang, "form_title", sha=sha))


def form_submitted_card(lang: str) -> dict:
    """Replaces the form once it is submitted, so it cannot be sent twice (the question itself is
    shown by the answer's header right below)."""
    return card([{"tag": "markdown", "content": grey(md_escape(ft(lang, "submitted")))}], None, ft(lang, "submitted"))


def answer_card(raw: str, *, streaming: bool, lang: str = "zh") -> dict:
    """The card an answer streams into: one markdown element with a fixed element_id."""
    content = md_escape(raw) if raw else ft(lang, "thinking")
    summary = ft(lang, "answer_summary") if streaming or not raw.strip() else plain(raw, 60)
    return card(
        [{"tag": "markdown", "element_id": ANSWER_ELEMENT, "content": content}], None, summary, streaming=streaming
    )


def answer_fits(raw: str, budget: int = CARD_BUDGET) -> bool:
    """The streaming card (CardKit create: the card escaped in `data`) fits; its text alone (the
    streamed `content` updates) is smaller still."""
    return body_bytes(answer_card(raw, streaming=True)) <= budget


def answer_cut(raw: str, budget: int = CARD_BUDGET) -> int:
    """The length of the longest prefix of `raw` whose answer card fits, preferring a cut at a
    paragraph, line or word boundary (0 < result ≤ len(raw))."""
    if answer_fits(raw, budget):
        return len(raw)
    lo, hi = 1, len(raw)
    while lo < hi:  # largest n with answer_fits(raw[:n])
        mid = (lo + hi + 1) // 2
        if answer_fits(raw[:mid], budget):
            lo = mid
        else:
            hi = mid - 1
    for sep in ("\n\n", "\n", " "):
        at = raw.rfind(sep, 0, lo)
        if at >= lo // 2:
            return at + len(sep)
    return max(lo, 1)


def answer_segments(raw: str, budget: int = CARD_BUDGET) -> list[str]:
    """A long answer as the texts of consecutive answer cards; a fenced block cut in two is
    reopened on the next card. Joined (minus the reopened fences) they are the whole answer."""
    segments: list[str] = []
    rest = raw
    while True:
        cut = answer_cut(rest, budget)
        segments.append(rest[:cut])
        if cut >= len(rest):
            return segments
        rest = fence_opener(rest[:cut]) + rest[cut:]


# --- the small text-only card for ephemeral ("only you can see this") messages ----------------


def ephemeral_card(text: str) -> dict:
    """The ephemeral-message API takes a message card in the older JSON 1.0 shape."""
    return {
        "config": {"wide_screen_mode": True},
        "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": md_escape(text)}}],
    }


def stable_id(*parts: object, length: int = 40) -> str:
    """A short stable identifier (for `uuid`s) from any parts."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return digest[:length]


def all_markdown(cards: Iterable[dict]) -> list[str]:
    """Every markdown/lark_md content string in the cards (tests, and a safety audit)."""
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if node.get("tag") in ("markdown", "lark_md") and isinstance(node.get("content"), str):
                found.append(node["content"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for c in cards:
        walk(c)
    return found


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
]


def _digest_head(d: Digest, title: str, stats: str) -> tuple[Header, list[Block]]:
    """The card header (coloured by the highest level present) and the stats, meta and filter
    lines that open a day's digest and a weekly roll-up alike."""
    lang = d.lang
    counts = [(imp, d.count(imp)) for imp in Importance]
    top = next((imp for imp, n in counts if n), Importance.LOW)
    header = Header(
        title,
        IMPORTANCE_COLOUR[top] if d.entries else "blue",
        subtitle=f"{d.repo} · {d.branch}" if d.branch else d.repo,
        tags=[(f"{imp.emoji} {n}", IMPORTANCE_COLOUR[imp]) for imp, n in counts if n],
    )
    meta = grey(md_escape(t(lang, "meta", branch=d.branch, tz=d.window.tz, n=len(d.entries))))
    blocks: list[Block] = [Fixed({"tag": "markdown", "content": md_escape(stats) + "\n" + meta})]
    if L.filter_line(d):
        blocks.append(Md(L.filter_line(d), wrap=grey))
    return header, blocks

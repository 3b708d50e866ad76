"""Feishu's card kit (card JSON 2.0): the Markdown escape, card sizes measured the way Feishu counts
them, the blocks a card is made of (splittable when one alone would not fit) and `pack`, which fits
them onto as few cards as the limit allows; also the small elements (buttons, rows, mentions, links)
every view uses. Pure, and blind to the chat contents: the views (`bot/render/feishu.py`,
`bot/render/feishu_answers.py`) decide what a card says, this module how it is spelled and cut.

Limits: Feishu's 30 KB is the *request body* (create, reply, patch, CardKit create), where the card
JSON travels as an escaped string: every `"` and newline of the card costs one more byte there.
So a card is measured as that escaped string (`body_bytes`) and filled up to `CARD_BUDGET`, which
leaves room for the rest of the body (receive_id, msg_type, uuid) and a margin; whatever does not
fit continues on the next card — nothing is ever dropped or cut.

Escaping: commit text, LLM output and user input reach `markdown` elements only through
`md_escape`, which leaves them unable to mention anyone (`<at id=all>`), link anywhere
(`[label](url)`, `<a>`, `<link>`, bare URLs), embed images or break out of a code block. The only
links on a card are the ones `link` builds from commit and PR URLs, the only mention the one
`mention` builds from an open_id Feishu itself sent.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..core import tenants
from ..core.chat_platform import chunk_text
from ..i18n import text
from .safe import strip_controls

MAX_BODY_BYTES = 30 * 1024  # Feishu rejects larger request bodies for cards (error 230025)
MAX_CARD_BYTES = MAX_BODY_BYTES  # kept for callers of the old name
# What we fill a card up to, measured escaped (`body_bytes`): ~2.7 KB left for the body's other
# fields (≤ 200 bytes) and for Feishu's own accounting (style tags are said to count extra).
CARD_BUDGET = 28_000
MAX_NODES = 120  # components per card (nested ones included): well inside Feishu's limit


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


_OPEN_ID = re.compile(r"^ou_[A-Za-z0-9_-]{1,64}$")


def mention(user: str) -> str:
    """A mention of the asking user (an open_id from Feishu's own event), never anything else. A
    store app's person is `tenant_key/ou_…` (bot/core/tenants.py): Feishu knows the bare open_id."""
    local = tenants.local_id(user or "")
    return f"<at id={local}></at>" if _OPEN_ID.match(local) else md_escape(user)


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


# --- elements ------------------------------------------------------------------------------------


def button(
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


def row(buttons: list[dict]) -> dict:
    return {
        "tag": "column_set",
        "flex_mode": "flow",
        "horizontal_spacing": "8px",
        "columns": [{"tag": "column", "width": "auto", "elements": [b]} for b in buttons],
    }


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


# --- identifiers and audits ----------------------------------------------------------------------


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

"""Slack's Block Kit kit: the limits, the one escape, the element builders and the pagination that
every Slack view (`bot/render/slack.py`, `bot/render/slack_answers.py`) is made of. Pure — no SDK,
no I/O — and blind to the chat contents: the views decide what a message says, this module how it is
spelled, measured and cut.

Limits: every payload `paginate` returns stays inside Block Kit's — 50 blocks, 3000 characters per
section, 150 per header, 10 context elements, 25 actions, 75 per button label — and conservatively
under Slack's undocumented cumulative limit (`msg_blocks_too_long` has been seen at ~13k
characters). Text that does not fit is split into more blocks or continuation payloads, never cut.

Escaping: untrusted text (commit titles, bodies, authors, LLM output, anything a user typed) goes
through `esc`: `&`, `<`, `>` become entities, so `<!channel>`, `<@U…>`, `<!subteam^…>` and
`<url|label>` render as inert text; bare `@channel`/`@here`/`@everyone` get a zero-width joiner;
`](` gets a zero-width space so Markdown surfaces (streams) cannot form a link either. The only
`<url|label>` links are the ones `link` builds from URLs the bot itself knows (commit, PR, reverted
commit). Button values and block ids are JSON written by `compact_json`, which escapes the same
characters.

The action ids live here too: the views put them on buttons and menus, the handlers route on them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from ..core import tenants
from ..core.chat_platform import chunk_text
from ..i18n import text
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


# --- action ids (the buttons and menus the views draw, the handlers route) --------------------------

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


def safe_url(url: str | None) -> str | None:
    """Only http(s) URLs without characters that could end or split Slack's <url|label> syntax."""
    if not url or not re.match(r"^https?://[^\s<>|]+$", url):
        return None
    return url.replace("&", "&amp;")


def link(url: str | None, label: str) -> str:
    """A link the bot itself builds; `label` must already be escaped. No safe URL: the label alone."""
    safe = safe_url(url)
    return f"<{safe}|{label}>" if safe else label


_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")


def mention(user: str) -> str:
    """A Slack user id becomes a mention (a workspace-qualified `T1/U1` as `<@U1>`: Slack knows
    the bare id); anything else is shown as escaped text."""
    local = tenants.local_id(user or "")
    return f"<@{local}>" if _USER_ID.match(local) else esc(user)


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


def clip_label(text: str, limit: int) -> str:
    """Button and option labels are handles, not content (the full text is in the message):
    shorten them visibly with '…'."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def fit_label(raw: str, limit: int) -> str:
    """An escaped label of at most `limit` characters (escaping may lengthen it: clip first).
    The longest clip that fits, one character at a time: jumping by the overflow shortened labels far
    more than needed, and a hard cut at `limit` dropped the '…' and could split an entity."""
    for keep in range(limit, 0, -1):
        out = esc(clip_label(raw, keep))
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
    return finish_pages(pages, fallback, lang)


def finish_pages(pages: list[list[dict]], fallback: str, lang: str) -> list[dict]:
    """Payloads from pages already cut: the fallback text clipped to a preview, and every page after
    the first opened by a '(continued i/n)' marker."""
    total = len(pages)
    preview = clip_label(fallback, FALLBACK_CHARS)
    payloads = []
    for i, page in enumerate(pages, 1):
        if i > 1:
            marker = s(lang, "continued", i=i, n=total)
            page = context(f"{esc(clip_label(preview, 200))} {marker}") + page
            text = f"{preview} {marker}"
        else:
            text = preview
        payloads.append({"text": esc(text), "blocks": page})
    return payloads


# --- reading payloads back (button values, the texts shown) -------------------------------------------


def parse_value(raw: str | None) -> dict:
    try:
        value = json.loads(raw or "")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


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

"""The question side of Feishu: the card asking which commit a question meant (CommitChoice), the
header an answer streams under (AnswerHeader), the Ask button's form, and the streaming answer card
with the arithmetic that cuts a long answer across cards. Kept apart from the digest's views
(`bot/render/feishu.py`) because it is the conversation that draws these, not a digest; both are
made of `bot/render/feishu_kit.py`.
"""

from __future__ import annotations

from ..core.chat_platform import AnswerHeader, CommitChoice
from .feishu_kit import (
    CARD_BUDGET,
    Block,
    Fixed,
    Header,
    Md,
    body_bytes,
    button,
    card,
    fence_opener,
    ft,
    grey,
    link,
    md_escape,
    mention,
    pack,
    plain,
)

ANSWER_ELEMENT = "answer"  # element_id of the streamed markdown element


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
        buttons.append(button(f"{c.short_sha} · {plain(c.title)}", value=value, width="fill"))
    blocks.append(Fixed({"tag": "markdown", "content": md_escape(ft(lang, "choose_hint"))}))
    blocks += [Fixed(b) for b in buttons]
    return pack(blocks, header, ft(lang, "choose"), lang)


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

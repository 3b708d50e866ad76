"""The question side of Slack: the message asking which commit a question meant (CommitChoice, a
button per commit), the header an answer streams under (AnswerHeader), and the Ask button's form
(a modal). Kept apart from the digest's views (`bot/render/slack.py`) because it is the conversation
that draws these, not a digest; both are made of `bot/render/slack_kit.py`.
"""

from __future__ import annotations

from ..core.chat_platform import AnswerHeader, CommitChoice
from .slack_kit import (
    ACTION_CHOOSE,
    VALUE_CHARS,
    actions,
    button,
    compact_json,
    context,
    esc,
    fit_label,
    guess_lang,
    link,
    mention,
    mrkdwn,
    packed_sections,
    paginate,
    plain,
    s,
    sections,
)

# The question form's ids: what its submission carries back to the handlers.
MODAL_CALLBACK = "digest_ask_modal"
MODAL_BLOCK = "question"
MODAL_INPUT = "question"


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

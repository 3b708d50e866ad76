"""A question as asked: its checks (not empty, not too long) and a thread's earlier turns. Plain,
so the chat layer can check a question and keep turns without importing how answers are made."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.models import UsageError
from ..i18n import text

MAX_QUESTION_CHARS = 2000


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str


def qa_text(lang: str, key: str, **values) -> str:
    return text(lang, f"qa.{key}", **values)


def check_question(question: str, lang: str) -> str:
    """The question, stripped; a UsageError sentence when it cannot be asked."""
    q = (question or "").strip()
    if not q:
        raise UsageError(qa_text(lang, "empty_question"))
    if len(q) > MAX_QUESTION_CHARS:
        raise UsageError(qa_text(lang, "too_long", n=len(q), limit=MAX_QUESTION_CHARS))
    return q

"""Small helpers for the two languages the analyser writes: numbers, name lists, clipping."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...core.models import ChangeType
from ...i18n import Phrase, phrase, text
from ...i18n import is_zh as is_zh  # the offline modules say it from here


def num(n: int) -> str:
    return f"{n:,}"


def lines(additions: int, deletions: int) -> str:
    """'+340/−25' — the minus is U+2212 so it reads as a sign, not a hyphen."""
    return f"+{num(additions)}/−{num(deletions)}"


class Names:
    """Names as a field of a catalogue sentence, listed in the reader's language: the first
    `limit` joined with the language's separator, then how many more."""

    __slots__ = ("names", "limit")

    def __init__(self, names: Sequence[str], limit: int = 3):
        self.names, self.limit = tuple(names), limit

    def say(self, lang: str | None) -> str:
        shown = self.names[: self.limit]
        rest = len(self.names) - len(shown)
        listed = text(lang, "common.list_sep").join(shown)
        if rest <= 0:
            return listed
        return text(lang, "common.names_more", names=listed, rest=num(rest), total=num(len(self.names)))

    def __repr__(self) -> str:
        return f"Names({self.names!r}, {self.limit!r})"


def clip(text: str, limit: int) -> str:
    """Cut at a sentence end if one is near the limit, else at a word, and say so with '…'."""
    text = text.strip()
    if len(text) <= limit:
        return text
    window = text[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)|[。！？；]", window)]
    if ends and ends[-1] >= limit * 0.4:
        return window[: ends[-1]].strip()
    space = window.rfind(" ")
    cut = window[:space] if space >= limit * 0.5 else window
    return cut.rstrip(" ,;:，、") + "…"


def lower_first(text: str) -> str:
    """'The title says' → 'the title says' after a semicolon; leaves 'CVE-…' and 'API' alone."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def noun(ctype: ChangeType, mid: bool = False) -> Phrase:
    """The kind of change as a field: opening a sentence ('Bug fix …'), or with `mid` inside one
    ('… as a bug fix'). The catalogue keys are `offline.size.noun_<type>.head|mid`."""
    return phrase(f"offline.size.noun_{ctype.name.lower()}.{'mid' if mid else 'head'}")

"""Breaking changes the author declares: a `!` prefix, a [Breaking] tag, 'breaking' in the title,
a `BREAKING CHANGE:` footer or a ticked template box. Always high: the author says callers break."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....i18n import phrase
from ....models import Importance
from ..context import Context, Fact, Insight, Risk

_BREAKING = re.compile(r"\bbreaking\b", re.I)


def _in_text(text: str) -> bool:
    """'breaking' as a claim, not 'non-breaking' / 'not breaking' / 'no breaking'."""
    for m in _BREAKING.finditer(text):
        before = text[max(0, m.start() - 5) : m.start()].lower()
        if not re.search(r"(non-|non |not |no |un)$", before):
            return True
    return False


def _in_body(body: str) -> bool:
    """The conventional footer ('BREAKING CHANGE: …') or a ticked template box."""
    return bool(
        re.search(r"^\s*BREAKING[ -]CHANGES?\b", body, re.M) or re.search(r"^\s*[-*]\s*\[[xX]\]\s*breaking", body, re.M)
    )


def declared(title_text: str, body: str, bang: bool, tag_keys: Sequence[str]) -> bool:
    """Does the message declare a breaking change? (`tag_keys`: normalised bracket tags)."""
    return bang or any("breaking" in k for k in tag_keys) or _in_text(title_text) or _in_body(body)


def facts(c: Context) -> list[Fact]:
    if not c.title.breaking:
        return []
    return [Fact(Importance.HIGH, phrase("offline.breaking.declared"), order=10)]


def risks(c: Context) -> list[Risk]:
    if not c.title.breaking:
        return []
    return [Risk(10, phrase("offline.breaking.callers_fail"), phrase("offline.breaking.read_migration_notes"))]


def insights(c: Context) -> list[Insight]:
    return []

"""Breaking changes the author declares: a `!` prefix, a [Breaking] tag, a 'Breaking:' label, a
'(breaking)' aside or a shouted BREAKING in the title, a `BREAKING CHANGE:` footer or a ticked
template box. Always high: the author says callers break.

A declaration is a label the author puts on the change, not any use of the word: 'Avoid breaking
call chains', 'Fix line breaking', 'ruff format: breaking.py' and `is_breaking` say nothing about
what this change does to callers. The declaration is read in words.py (`TitleInfo.breaking`)."""

from __future__ import annotations

from ....core.models import Importance
from ....i18n import phrase
from ..context import Context, Fact, Insight, Risk


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

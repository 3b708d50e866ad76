"""Breaking changes the author declares: a `!` prefix, a [Breaking] tag, a 'Breaking:' label, a
'(breaking)' aside or a shouted BREAKING in the title, a `BREAKING CHANGE:` footer or a ticked
template box; or a body that says an interface changes under its callers ("This PR changes the
two residual inputs to …", "callers must update") when the diff changes public shipped code.
Always high: the author says callers break.

A declaration is a label the author puts on the change, not any use of the word: 'Avoid breaking
call chains', 'Fix line breaking', 'ruff format: breaking.py' and `is_breaking` say nothing about
what this change does to callers. The declaration is read in words.py (`TitleInfo.breaking`)."""

from __future__ import annotations

from ....core.models import ChangeType, Importance
from ....i18n import Phrase, phrase
from ..context import Context, Fact, Insight, Risk
from ..patch import code_changes
from ..stats import WhereNames

# Kinds of commit whose diff cannot change what callers pass.
_NOT_CODE = (ChangeType.TESTS, ChangeType.DOCS, ChangeType.CI_BUILD, ChangeType.DEPENDENCIES)


def interface_changed(c: Context) -> bool:
    """The body says an interface changes under its callers (a hint) and the diff changes the
    code of public shipped source (what bears it out)."""
    if not c.title.interface_change or c.title.breaking or c.ctype in _NOT_CODE:
        return False
    public = [f for f in c.stats.source if not c.profile.is_internal(f.path) and c.profile.is_public(f.path)]
    return any(code_changes(f) for f in public)


def _said(c: Context) -> Phrase:
    what = c.title.interface_change
    if what == "callers":
        return phrase("offline.breaking.callers_declared")
    return phrase("offline.breaking.interface_declared", what=_quoted(what))


def _quoted(words: str) -> Phrase:
    """The author's words, quoted in the reader's quotation marks (they stay as written)."""
    return phrase("offline.said.quoted", text=words)


def facts(c: Context) -> list[Fact]:
    if c.title.breaking:
        return [Fact(Importance.HIGH, phrase("offline.breaking.declared"), order=10)]
    if interface_changed(c):
        return [Fact(Importance.HIGH, _said(c), order=11)]
    return []


def risks(c: Context) -> list[Risk]:
    if c.title.breaking:
        return [Risk(10, phrase("offline.breaking.callers_fail"), phrase("offline.breaking.read_migration_notes"))]
    if interface_changed(c):
        where = WhereNames(c.stats, c.diff.hunk_names)
        said = c.title.interface_change
        what = _quoted(said) if said != "callers" else phrase("offline.breaking.the_interface")
        return [
            Risk(
                10,
                phrase("offline.breaking.interface_callers_fail", what=what, where=where),
                phrase("offline.breaking.update_callers", where=where),
            )
        ]
    return []


def insights(c: Context) -> list[Insight]:
    return []

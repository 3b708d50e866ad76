"""Breaking changes the author declares: a `!` prefix, a [Breaking] tag, a 'Breaking:' label, a
'(breaking)' aside or a shouted BREAKING in the title, a `BREAKING CHANGE:` footer or a ticked
template box. Always high: the author says callers break.

A declaration is a label the author puts on the change, not any use of the word: 'Avoid breaking
call chains', 'Fix line breaking', 'ruff format: breaking.py' and `is_breaking` say nothing about
what this change does to callers."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....core.models import Importance
from ....i18n import phrase
from ..context import Context, Fact, Insight, Risk
from ..message import prose

_TAG = re.compile(r"\[[^\[\]]{1,40}\]\s*:?")
_WORD = r"breaking(?:[ -]changes?)?"
_DECLARATION = re.compile(
    # a label before the subject, after any conventional prefix: "Breaking: …", "feat: breaking change - …"
    rf"^(?:[A-Za-z]+(?:\([^)]*\))?!?\s*:\s*)?{_WORD}\s*(?::|!|\s[-–—]\s)"
    # an aside: "… (breaking)", "… — breaking change"
    rf"|\(\s*{_WORD}\s*\)|\s[-–—,;]\s*{_WORD}\s*[.!]?$"
    # a sentence saying so: "… is a breaking change"
    r"|\b(?:is|as) an? breaking change\b",
    re.I,
)
_SHOUTED = re.compile(r"\bBREAKING\b")  # "BREAKING: …", "… [BREAKING]", "… BREAKING CHANGE"
_NEGATED_TAG = re.compile(r"\b(non|not?|un)[- ]?breaking", re.I)


def _in_title(title_text: str) -> bool:
    """The title declares it: a label, an aside or a shouted BREAKING — read without the names in
    it (file names, paths, identifiers, code spans)."""
    words = prose(title_text)
    subject = _TAG.sub(" ", words).strip(" :-–—")
    return bool(_DECLARATION.search(subject) or _SHOUTED.search(words))


def _in_tags(tags: Sequence[str]) -> bool:
    """A bracket tag that says so: [Breaking], [BREAKING CHANGE], [breaking-change] — not
    [non-breaking], and not a file name in brackets."""
    return any(re.search(r"(?<![\w-])breaking\b", prose(tag), re.I) and not _NEGATED_TAG.search(tag) for tag in tags)


def _in_body(body: str) -> bool:
    """The conventional footer ('BREAKING CHANGE: …') or a ticked template box whose label is the
    declaration ('- [x] Breaking change (fix or feature that …)'; not '- [x] Breaking changes are
    documented', not '- [x] breaking.py reformatted')."""
    return bool(
        re.search(r"^\s*BREAKING[ -]CHANGES?\s*(?::|$)", body, re.M)
        or re.search(rf"^\s*[-*]\s*\[[xX]\]\s*{_WORD}\s*(?:$|[(:—–-])", prose(body), re.M | re.I)
    )


def declared(title_text: str, body: str, bang: bool, tags: Sequence[str]) -> bool:
    """Does the message declare a breaking change? (`tags`: the title's bracket tags as written)."""
    return bang or _in_tags(tags) or _in_title(title_text) or _in_body(body)


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

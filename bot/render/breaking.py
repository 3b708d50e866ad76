"""Is a commit breaking? The answer schema has no breaking flag, so a commit is breaking when its
analysis says so where the analysers put it: the offline analyser's own breaking sentences in its
importance reason or risks (bot/analysis/offline/evidence/breaking.py), or an above-low analysis
whose reason or risks name a breaking change (not "non-breaking", "no breaking change").
Shared by the release notes (changelog.py) and the upgrade report (upgrade.py)."""

from __future__ import annotations

import re

from ..core.models import DigestEntry, Importance
from ..i18n import LANGS, text

# A breaking change named in prose, in either language, unless negated right before it.
_NAMED = re.compile(
    r"(?<![\w-])(?<!non-)(?<!non )(?<!no )(?<!not )(?<!not a )breaking[ -]changes?\b"
    r"|(?<!无)(?<!没有)(?<!不是)(?<!非)(?:不兼容|破坏性)(?:的)?(?:变更|改动|修改)",
    re.IGNORECASE,
)


def _offline_marks() -> tuple[str, ...]:
    return tuple(text(lang, f"offline.breaking.{key}") for lang in LANGS for key in ("declared", "callers_fail"))


def is_breaking(entry: DigestEntry) -> bool:
    """Does the commit's analysis say it breaks callers? (See the module's docstring.)"""
    a = entry.analysis
    if a is None:
        return False
    said = (a.importance_reason, *a.risks)
    if any(mark in s for s in said for mark in _offline_marks()):
        return True
    return a.importance is not Importance.LOW and any(_NAMED.search(s) for s in said)

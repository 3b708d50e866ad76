"""Breaking changes the author declares: a `!` prefix, a [Breaking] tag, a 'Breaking:' label, a
'(breaking)' aside or a shouted BREAKING in the title, a `BREAKING CHANGE:` footer or a ticked
template box; or a body that says an interface changes under its callers ("This PR changes the
two residual inputs to …", "callers must update") when the diff changes public shipped code.
Always high: the author says callers break.

A declaration is a label the author puts on the change, not any use of the word: 'Avoid breaking
call chains', 'Fix line breaking', 'ruff format: breaking.py' and `is_breaking` say nothing about
what this change does to callers. The declaration is read in words.py (`TitleInfo.breaking`)."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING

from ....core.models import ChangeType, Importance
from ....i18n import Phrase, phrase
from ..context import Context, Fact, Insight, Risk
from ..lang import Names
from ..patch import code_changes
from ..paths import is_experimental
from ..stats import WhereNames

if TYPE_CHECKING:
    from ...repo_config import RepoProfile
    from ..stats import FileStats

# Kinds of commit whose diff cannot change what callers pass.
_NOT_CODE = (ChangeType.TESTS, ChangeType.DOCS, ChangeType.CI_BUILD, ChangeType.DEPENDENCIES)


def interface_changed(c: Context) -> bool:
    """The body says an interface changes under its callers (a hint) and the diff changes the
    code of public shipped source (what bears it out)."""
    if not c.title.interface_change or c.title.breaking or c.ctype in _NOT_CODE:
        return False
    public = [f for f in c.stats.source if not c.profile.is_internal(f.path) and c.profile.is_public(f.path)]
    return any(code_changes(f) for f in public)


_TOP_DEF = re.compile(r"(?:async\s+)?def\s+([A-Za-z_]\w*)")
# A removed and an added line returning a tuple: without both, no returned tuple can grow (two
# searches of the patch, in C, spare reading the lines of every patch that merely returns something).
_TUPLE_RETURN_REMOVED = re.compile(r"\n-[ \t]*return [^\n]*,")
_TUPLE_RETURN_ADDED = re.compile(r"\n\+[ \t]*return [^\n]*,")
# A line at the module's level (a hunk header naming a def counts as one): `def name` or another statement.
_TOP_LEVEL = re.compile(
    r"\n(?:@@[^\n]*@@ ?(?:(?:async\s+)?def\s+([A-Za-z_]\w*))?|[-+ ](?:(?:async\s+)?def\s+([A-Za-z_]\w*)|(?=[^ \t\n@#)])))"
)
_CHANGED_RETURN = re.compile(r"\n([-+])[ \t]+return\s([^\n]*)")


def _arity(expr: str) -> int:
    """How many values `return <expr>` gives: its top-level commas plus one; 0 when the line does
    not hold the whole expression (an open bracket continues on the next line)."""
    expr = expr.split("#", 1)[0].strip().rstrip(",") if "#" in expr else expr.strip()
    depth, n = 0, 1
    for ch in expr:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    if depth:
        return 0
    if n == 1 and expr.startswith("(") and expr.endswith(")"):
        return _arity(expr[1:-1])  # `return (a, b)`
    return n


def _private_module(path: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in path.split("/"))


def grown_returns(stats: FileStats, profile: RepoProfile) -> list[tuple[str, str, int, int]]:
    """(path, function, values before, values after) for each public module-level Python function
    of a public module whose returned tuple gains values (`return out, handle` → `return out,
    handle, count`): a caller unpacking the old tuple fails. Methods (indented) are not read: a
    framework calls `forward` for its users."""
    out: list[tuple[str, str, int, int]] = []
    for f in stats.source:
        if not f.deletions or not f.additions or not f.path.endswith(".py") or _private_module(f.path):
            continue
        if not f.patch or "return" not in f.patch:
            continue
        if not _TUPLE_RETURN_REMOVED.search(f.patch) or not _TUPLE_RETURN_ADDED.search(f.patch):
            continue
        if profile.is_internal(f.path) or not profile.is_public(f.path) or is_experimental(f.path, profile):
            continue
        patch = "\n" + f.patch
        # Where each module-level statement starts (a def names its function; anything else ends
        # one) and each changed `return` line, found by two searches of the patch, in C.
        starts = [(m.start(), m.group(1) or m.group(2) or "") for m in _TOP_LEVEL.finditer(patch)]
        positions = [p for p, _ in starts]
        arities: dict[str, tuple[set[int], set[int]]] = {}
        for m in _CHANGED_RETURN.finditer(patch):
            i = bisect_right(positions, m.start()) - 1
            fn = starts[i][1] if i >= 0 else ""
            if fn and not fn.startswith("_") and (n := _arity(m.group(2))):
                arities.setdefault(fn, (set(), set()))[m.group(1) == "+"].add(n)
        for name, (before, after) in arities.items():
            if before and after and min(after) > max(before) >= 2:
                out.append((f.path, name, max(before), min(after)))
    return out


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
    if c.diff.grown_returns:
        # Callers unpack the returned tuple: `out, handle = f(x)` raises once f returns three values.
        _, _, before, after = c.diff.grown_returns[0]
        said = phrase("offline.breaking.returns_more", names=_grown(c), old=before, new=after)
        return [Fact(Importance.HIGH, said, order=12)]
    return []


def _grown(c: Context) -> Names:
    return Names([f"{name}()" for _, name, _, _ in c.diff.grown_returns], 3)


def risks(c: Context) -> list[Risk]:
    if c.diff.grown_returns and not c.title.breaking and not interface_changed(c):
        _, _, before, _ = c.diff.grown_returns[0]
        return [
            Risk(
                12,
                phrase("offline.breaking.unpacking_fails", names=_grown(c), old=before),
                phrase("offline.breaking.update_unpacking", names=_grown(c)),
            )
        ]
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

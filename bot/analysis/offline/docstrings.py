"""Where a hunk of a Python patch begins inside a triple-quoted string (a docstring): a hunk of a
function's body often opens in its docstring, and its closing quotes must not be read as opening
ones — everything after them would look like a docstring and the code change be lost (patch.py's
code counts and views start each hunk in the state this says)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

_TRIPLE = ('"""', "'''")
# What may stand before a triple quote that opens a string: an assignment, a call, a return.
_OPENS_AFTER = re.compile(r"(?:[=(,\[{:]|\breturn|\byield)\s*[rbufRBUF]{0,2}$")
# The line before a bare triple quote that opens a docstring: a `def`/`class` header (or its
# wrapped end), a decorator, a comment, an assignment or call left open.
_HEADER_END = re.compile(r"(?:[:(,=\[{]|->.*:)\s*$|^\s*[#@]")


# A line that is code, not prose: a statement's keyword, an assignment or a call.
_CODE_AFTER = re.compile(
    r"(?:import|from|for|if|while|with|try|return|raise|yield|assert|del|pass|def|class|async|await)\b"
    r"|[\w.\[\]]+\s*(?:[-+*/|&]?=[^=]|\()"
)


def _opens(stripped: str, before: str | None, after: str | None = None) -> bool:
    """Does this line, the first of a hunk with an odd number of triple quotes, open a string (or
    close one the hunk began inside)? `before`: the hunk's nearest non-blank line above it; `after`:
    the next one below it (read only when nothing is above it)."""
    at = min(i for i in (stripped.find(q) for q in _TRIPLE) if i >= 0)
    head, tail = stripped[:at], stripped[at + 3 :]
    if head.strip(" rbufRBUF"):
        return bool(_OPENS_AFTER.search(head))  # 'x = """…' opens; 'the last words."""' closes
    if tail.strip():
        return True  # '"""Summary line' opens a docstring
    if before is None:
        return not _CODE_AFTER.match(after or "")  # the hunk's first line: closes when code follows it
    return bool(_HEADER_END.search(before))  # a bare quote: opens after a header


def _new_side(lines: Iterable[str]) -> Iterator[str]:
    """The stripped, non-blank lines of the new file among raw diff lines (context and added)."""
    return (t for t in (line[1:].strip() for line in lines if line[:1] in (" ", "+")) if t)


@lru_cache(maxsize=64)
def docstring_starts(patch: str) -> frozenset[int]:
    """The hunks (numbered from 1 at each '@@' line) that begin inside a triple-quoted string: a
    hunk of a function's body often opens in its docstring, and its closing quotes must not be
    read as opening ones (everything after would look like a docstring and the code change be lost).
    Read per hunk with string searches, not line by line: only the hunk's first quoted line counts."""
    out: set[int] = set()
    quotes = [q for q in _TRIPLE if q in patch]
    heads = [0] if patch.startswith("@@") else []
    at = patch.find("\n@@")
    while at >= 0:
        heads.append(at + 1)
        at = patch.find("\n@@", at + 3)
    for hunk, (start, end) in enumerate(zip(heads, [*heads[1:], len(patch)], strict=True), 1):
        at = start
        while True:  # the first line of the new file (not a removed one) with a triple quote
            found = [i for i in (patch.find(q, at, end) for q in quotes) if i >= 0]
            if not found:
                break
            line_start = patch.rfind("\n", start, min(found)) + 1
            line_end = patch.find("\n", min(found), end)
            line_end = end if line_end < 0 else line_end
            line = patch[line_start:line_end]
            if line_start > start and line[:1] in (" ", "+"):
                stripped = line[1:].strip()
                if (stripped.count('"""') + stripped.count("'''")) % 2:
                    above = next(_new_side(reversed(patch[start:line_start].split("\n")[1:])), None)
                    below = None if above else next(_new_side(patch[line_end:end].split("\n", 4)[:4]), None)
                    if not _opens(stripped, above, below):
                        out.add(hunk)
                    break
            at = line_end
    return frozenset(out)

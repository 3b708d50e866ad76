"""Path patterns for watches: which commits touch `crates/uv-resolver/**`. Pure: a pattern and a
path in, yes or no out.

Patterns are relative to the repository root and case-sensitive, like git paths:

  **        any run of characters, `/` included (`a/**/b` also matches `a/b`)
  *  ?      any run of characters / one character, never `/` (within one path segment)
  [abc]     one of these characters ([!abc]: none of them)
  docs      a pattern without wildcards names that file or everything under that directory
  docs/     (a trailing / too)

A commit touches a pattern when any of its paths matches (a rename counts its old path too).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

MAX_CHARS = 200


class GlobError(ValueError):
    """A pattern that cannot name a path in a repository."""


def normalise(glob: str) -> str:
    """The pattern as matched (`./` dropped); GlobError when it cannot name a repository path."""
    g = glob.strip()
    while g.startswith("./"):
        g = g[2:]
    if not g or len(g) > MAX_CHARS or g.startswith("/") or ".." in g.split("/") or "\\" in g \
            or any(ord(ch) < 32 for ch in g):
        raise GlobError(glob)
    _compile(g)  # an unbalanced [ … ] is refused here
    return g


@lru_cache(maxsize=512)
def _compile(glob: str) -> re.Pattern:
    out: list[str] = []
    i, wildcard = 0, False
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**", i):
            wildcard = True
            i += 2
            if glob.startswith("/", i):  # `**/`: zero or more whole directories
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if ch == "*":
            wildcard = True
            out.append("[^/]*")
        elif ch == "?":
            wildcard = True
            out.append("[^/]")
        elif ch == "[":
            end = glob.find("]", i + 2 if glob.startswith(("[!", "[^"), i) else i + 1)
            if end < 0:
                raise GlobError(glob)
            body = glob[i + 1:end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            if not body:
                raise GlobError(glob)
            wildcard = True
            out.append(("[^/" if negate else "[") + re.escape(body).replace("\\-", "-") + "]")
            i = end
        elif ch == "]":
            raise GlobError(glob)
        else:
            out.append(re.escape(ch))
        i += 1
    pattern = "".join(out)
    if not wildcard or glob.endswith("/"):  # a directory (or a file) named plainly: it and all below it
        pattern = pattern.rstrip("/") + "(?:/.*)?"
    return re.compile(pattern + r"\Z")


def matches(path: str, glob: str) -> bool:
    return _compile(glob).match(path.lstrip("/")) is not None


def touches(paths: Iterable[str], glob: str) -> bool:
    return any(matches(p, glob) for p in paths)


def touched_paths(files) -> list[str]:
    """Every path a commit touches: new paths, and the old path of a rename."""
    out: list[str] = []
    for f in files:
        out.append(f.path)
        if f.previous_path and f.previous_path != f.path:
            out.append(f.previous_path)
    return out

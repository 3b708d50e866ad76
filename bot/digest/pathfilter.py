"""Which commits a digest keeps, by the files they touch: `paths GLOB…` and `exclude GLOB…`.

Globs are relative to the repository root and case-sensitive, like git paths:

  **        any run of characters, `/` included (any depth; `a/**/b` also matches `a/b`)
  *  ?      any run of characters / one character, never `/` (within one path segment)
  [abc]     one of these characters ([!abc]: none of them)
  crates/uv-resolver    a glob without wildcards names that file or everything under that directory
  docs/                 (a trailing / too)

A commit is kept by `paths` when ANY file it touches matches any of the globs (a change that also
touches the resolver is a resolver change), and dropped by `exclude` when ALL its files match an
exclude glob (a commit touching docs and code is not "just docs"). A rename counts both its old and
its new path. A commit with no files at all (empty) is dropped by `paths` and kept by `exclude`.
Pure: words in, a filter or a CommandError out; a file list in, a yes or no out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_GLOBS = 20  # per option: a filter longer than this is a mistake, and every commit pays for it
MAX_GLOB_CHARS = 200


class GlobError(ValueError):
    """A glob that cannot be used; `reason` is the catalogue key (noise.*) saying why."""

    def __init__(self, glob: str, reason: str):
        super().__init__(f"{glob}: {reason}")
        self.glob = glob
        self.reason = reason

    @property
    def fields(self) -> dict[str, str]:
        """The sentence's fields: the glob as typed, and (for a leading /) what to write instead."""
        return {"value": self.glob, "relative": self.glob.strip().lstrip("/") or "**"}


def normalise(glob: str) -> str:
    """The glob as matched: `./` dropped. Raises GlobError for what cannot name a repository path."""
    g = glob.strip()
    while g.startswith("./"):
        g = g[2:]
    if not g:
        raise GlobError(glob, "glob_empty")
    if len(g) > MAX_GLOB_CHARS:
        raise GlobError(glob, "glob_long")
    if g.startswith("/"):
        raise GlobError(glob, "glob_absolute")
    if ".." in g.split("/"):
        raise GlobError(glob, "glob_parent")
    if "\\" in g or any(ord(ch) < 32 for ch in g):
        raise GlobError(glob, "glob_chars")
    _translate(g)  # unbalanced [ … ] is refused here
    return g


@lru_cache(maxsize=512)
def _translate(glob: str) -> re.Pattern:
    out: list[str] = []
    i, n = 0, len(glob)
    wildcard = False
    while i < n:
        ch = glob[i]
        if ch == "*":
            wildcard = True
            if glob.startswith("**", i):
                i += 2
                if glob.startswith("/", i):  # `**/` : zero or more whole directories
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif ch == "?":
            wildcard = True
            out.append("[^/]")
        elif ch == "[":
            end = glob.find("]", i + 2 if glob.startswith(("[!", "[^"), i) else i + 1)
            if end < 0:
                raise GlobError(glob, "glob_bracket")
            body = glob[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            if not body:
                raise GlobError(glob, "glob_bracket")
            wildcard = True
            out.append(("[^/" if negate else "[") + re.escape(body).replace("\\-", "-") + "]")
            i = end
        elif ch == "]":
            raise GlobError(glob, "glob_bracket")
        else:
            out.append(re.escape(ch))
        i += 1
    pattern = "".join(out)
    if not wildcard or glob.endswith("/"):  # a directory (or file) named plainly: it and all below it
        pattern = pattern.rstrip("/") if pattern.endswith("/") else pattern
        pattern += "(?:/.*)?"
    return re.compile(pattern + r"\Z")


def matches(path: str, glob: str) -> bool:
    return _translate(glob).match(path.lstrip("/")) is not None


@dataclass(frozen=True)
class PathFilter:
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.paths or self.exclude)

    @classmethod
    def of(cls, paths: Iterable[str] = (), exclude: Iterable[str] = ()) -> PathFilter:
        return cls(tuple(normalise(g) for g in paths or ()), tuple(normalise(g) for g in exclude or ()))

    def keeps(self, touched: Sequence[str]) -> bool:
        """Whether a commit touching these paths belongs in the digest."""
        if self.paths and not any(matches(p, g) for p in touched for g in self.paths):
            return False
        return not (self.exclude and touched and all(any(matches(p, g) for g in self.exclude) for p in touched))

    def key(self) -> str:
        """For cache keys and job ids: equal filters, equal keys."""
        if not self:
            return ""
        return "p:" + ",".join(sorted(set(self.paths))) + "|x:" + ",".join(sorted(set(self.exclude)))


def touched_paths(files) -> list[str]:
    """Every path a commit touches: new paths, and the old path of a rename."""
    out: list[str] = []
    for f in files:
        out.append(f.path)
        if f.previous_path and f.previous_path != f.path:
            out.append(f.previous_path)
    return out

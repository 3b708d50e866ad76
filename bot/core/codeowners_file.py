"""A repository's CODEOWNERS, read with GitHub's rules: who owns a path.

GitHub looks for the file at `.github/CODEOWNERS`, then `CODEOWNERS`, then `docs/CODEOWNERS`
(`LOCATIONS`, the first that exists is the one). Each line is a pattern followed by owners:

- `#` starts a comment: a whole line, or a word at the start of the rest of a line;
- patterns are gitignore's: `*` and `?` match within one path segment, `**` across segments
  (`**/x`, `x/**`, `a/**/b`), a leading `/` (or any `/` inside the pattern) anchors it at the
  root, a pattern without one matches at any depth, a trailing `/` matches a directory (and
  everything under it), a pattern matches a file or any directory above it — except one
  ending in `/*`, which matches only the files directly in that directory (GitHub's docs:
  `docs/*` owns `docs/a.md` but not `docs/build/b.md`);
- paths are case-sensitive;
- the LAST line whose pattern matches a path decides its owners; a line with a pattern and no
  owners leaves the paths it matches un-owned;
- owners are `@user`, `@org/team` or an e-mail address.

What GitHub does not support is not guessed at: a line negating (`!x`), escaping (`\\#x`) or
using a character range (`[ab]`), or naming an owner in none of the three forms, is skipped and
counted (`CodeOwners.skipped`), so the digest can say how many lines it could not read.
Pure: no I/O; the file is read by bot/digest/entry_owners.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")

_USER = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
_TEAM = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+$")
_UNSUPPORTED = re.compile(r"^[!\\]|[\[\]\\]")  # negation, escapes, character ranges


def is_owner(word: str) -> bool:
    """`@user`, `@org/team` or an e-mail address, as CODEOWNERS names owners."""
    return bool(_USER.match(word) or _TEAM.match(word) or _EMAIL.match(word))


def owner_key(owner: str) -> str:
    """GitHub names and e-mail addresses compare without case."""
    return owner.lower()


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]  # () un-owns what the pattern matches
    regex: re.Pattern[str]


@dataclass(frozen=True)
class CodeOwners:
    rules: tuple[Rule, ...] = ()
    skipped: int = 0  # lines the bot could not read (left out, counted)
    path: str = ""  # where the file was found ("" : none)

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners of one path: the last matching rule's ('' path or no match: none)."""
        path = path.strip("/")
        for rule in reversed(self.rules):
            if rule.regex.search(path):
                return rule.owners
        return ()

    def owners_of_all(self, paths: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """Everyone owning any of `paths`, each once, in the order first met."""
        seen: dict[str, str] = {}
        for path in paths:
            for owner in self.owners_of(path):
                seen.setdefault(owner_key(owner), owner)
        return tuple(seen.values())


def parse(text: str, path: str = "") -> CodeOwners:
    """The rules of a CODEOWNERS file's text; unreadable lines are counted, never raised."""
    rules: list[Rule] = []
    skipped = 0
    for raw in text.splitlines():
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        for n, word in enumerate(words):
            if n and word.startswith("#"):  # an inline comment
                words = words[:n]
                break
        pattern, owners = words[0], tuple(words[1:])
        regex = compile_pattern(pattern)
        if regex is None or not all(is_owner(o) for o in owners):
            skipped += 1
            continue
        rules.append(Rule(pattern, owners, regex))
    return CodeOwners(tuple(rules), skipped, path)


def compile_pattern(pattern: str) -> re.Pattern[str] | None:
    """A gitignore-style pattern as a regex over a path without a leading slash; None when it
    uses syntax CODEOWNERS does not support."""
    if _UNSUPPORTED.search(pattern):
        return None
    directory = pattern.endswith("/")
    body = pattern.strip("/")
    if not body:
        return None
    anchored = pattern.startswith("/") or "/" in body
    segments = body.split("/")
    parts: list[str] = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            if i == 0:
                parts.append("(?:.*/)?" if not last else ".*")
            elif last:
                parts.append("/.*")
            else:
                parts.append("/(?:.*/)?")
            continue
        if i and segments[i - 1] != "**":
            parts.append("/")
        parts.append(_segment(seg))
    regex = "".join(parts)
    lead = "^" if anchored else "^(?:.*/)?"
    if segments[-1] == "**":
        tail = "$"
    elif directory:
        tail = "/.*$"  # a directory: something must be under it
    elif segments[-1] == "*" and len(segments) > 1:
        tail = "$"  # `dir/*`: the files directly in dir only
    else:
        tail = "(?:/.*)?$"  # the path itself, or a directory above it
    return re.compile(lead + regex + tail)


def _segment(seg: str) -> str:
    out: list[str] = []
    for ch in seg:
        if ch == "*":
            if not out or out[-1] != "[^/]*":  # `**` inside a segment is a plain `*`
                out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
    return "".join(out)

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

GitLab's file (`parse(text, path, gitlab=True)`, read at `GITLAB_LOCATIONS`) adds sections:

- `[Section]` starts one, `^[Section]` an optional one, `[Section][2]` one needing two approvals,
  and owners after the heading (`[Section] @owner`) are the section's default owners, given to
  each of its lines that names none; section names compare without case, and two sections of the
  same name are one;
- lines before any heading are a section of their own (unnamed);
- each section is read on its own (its last matching line decides, as above) and a path's owners
  are those every section gives it (GitLab asks each section's owners to approve);
- owners are also `@group/subgroup/…` and roles (`@@maintainer`).

What GitHub does not support is not guessed at: a line negating (`!x`), escaping (`\\#x`) or
using a character range (`[ab]`), or naming an owner in none of the three forms, is skipped and
counted (`CodeOwners.skipped`), so the digest can say how many lines it could not read.
Pure: no I/O; the file is read by bot/digest/entry_owners.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
GITLAB_LOCATIONS = ("CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")  # GitLab's order

_USER = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
_TEAM = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+$")
_UNSUPPORTED = re.compile(r"^[!\\]|[\[\]\\]")  # negation, escapes, character ranges
_GROUP = re.compile(r"^@[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")  # GitLab: nested groups
_ROLE = re.compile(r"^@@(?:developer|developers|maintainer|maintainers|owner|owners)$", re.I)
# `[Name]`, `^[Name]` (optional), `[Name][2]` (approvals), then the default owners
_SECTION = re.compile(r"^(\^)?\[([^\]]+)\](?:\[(\d+)\])?(?:\s+(.*))?$")


def is_owner(word: str) -> bool:
    """`@user`, `@org/team` or an e-mail address, as CODEOWNERS names owners."""
    return bool(_USER.match(word) or _TEAM.match(word) or _EMAIL.match(word))


def is_gitlab_owner(word: str) -> bool:
    """GitLab's owners: a user, a group or nested group, a role (`@@maintainer`), an e-mail address."""
    return bool(_GROUP.match(word) or _ROLE.match(word) or _EMAIL.match(word))


def owner_key(owner: str) -> str:
    """GitHub names and e-mail addresses compare without case."""
    return owner.lower()


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]  # () un-owns what the pattern matches
    regex: re.Pattern[str]
    section: str = ""  # GitLab: its section's name, lower case ("" : none, or before any heading)


@dataclass(frozen=True)
class Section:
    """A GitLab section's heading."""

    name: str  # as first written
    optional: bool = False  # `^[Name]`
    approvals: int = 1  # `[Name][2]`
    defaults: tuple[str, ...] = ()  # `[Name] @owner`: the owners of its lines that name none


@dataclass(frozen=True)
class CodeOwners:
    rules: tuple[Rule, ...] = ()
    skipped: int = 0  # lines the bot could not read (left out, counted)
    path: str = ""  # where the file was found ("" : none)
    sections: tuple[Section, ...] = ()  # GitLab's headings, in order (none: GitHub's file)

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners of one path: the last matching rule's ('' path or no match: none); with
        GitLab's sections, every section's last matching rule's owners, each once."""
        path = path.strip("/")
        found: dict[str, tuple[str, ...]] = {}  # section → its last matching rule's owners
        for rule in reversed(self.rules):
            if rule.section not in found and rule.regex.search(path):
                found[rule.section] = rule.owners
                if not self.sections:
                    break
        seen: dict[str, str] = {}
        for name in [""] + [s.name.lower() for s in self.sections]:  # in the file's order
            for owner in found.pop(name, ()):
                seen.setdefault(owner_key(owner), owner)
        return tuple(seen.values())

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name.lower() == name.lower()), None)

    def owners_of_all(self, paths: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """Everyone owning any of `paths`, each once, in the order first met."""
        seen: dict[str, str] = {}
        for path in paths:
            for owner in self.owners_of(path):
                seen.setdefault(owner_key(owner), owner)
        return tuple(seen.values())


def parse(text: str, path: str = "", *, gitlab: bool = False) -> CodeOwners:
    """The rules of a CODEOWNERS file's text (GitHub's, or `gitlab`'s with its sections);
    unreadable lines are counted, never raised."""
    rules: list[Rule] = []
    sections: dict[str, Section] = {}
    skipped, current = 0, ""
    owner_ok = is_gitlab_owner if gitlab else is_owner
    for raw in text.splitlines():
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        for n, word in enumerate(words):
            if n and word.startswith("#"):  # an inline comment
                words = words[:n]
                break
        heading = _SECTION.match(" ".join(words)) if gitlab and words[0].startswith(("[", "^[")) else None
        if heading is not None:
            optional, name, approvals, defaults = heading.groups()
            owners = tuple((defaults or "").split())
            if not name.strip() or not all(owner_ok(o) for o in owners):
                skipped += 1
                current = "\0skipped"  # its lines are not guessed into another section
                continue
            current = name.strip().lower()
            before = sections.get(current)
            sections[current] = Section(
                before.name if before else name.strip(),
                bool(optional) if before is None else before.optional and bool(optional),
                int(approvals) if approvals else (before.approvals if before else 1),
                tuple(dict.fromkeys((before.defaults if before else ()) + owners)),
            )
            continue
        pattern, owners = words[0], tuple(words[1:])
        regex = compile_pattern(pattern)
        if regex is None or not all(owner_ok(o) for o in owners) or current == "\0skipped":
            skipped += 1
            continue
        if not owners and current:
            owners = sections[current].defaults  # GitLab: the section's default owners
        rules.append(Rule(pattern, owners, regex, current))
    return CodeOwners(tuple(rules), skipped, path, tuple(sections.values()))


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

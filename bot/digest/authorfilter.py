"""Which commits a digest keeps, by who wrote them: `authors NAME…` and `exclude-authors NAME…`.

A NAME matches a commit when it is the author's name or login, case-insensitively: the name as
git records it (`Grace Hopper`, `dependabot[bot]`) or the login (the GitHub account, else the user
part of the author's e-mail address; GitHub's `12345+name@users.noreply.github.com` is `name`).
A leading `@` is dropped (`@octocat`), and `[bot]` may be left off (`dependabot` is
`dependabot[bot]`). A name with a space is quoted in chat (`authors "Grace Hopper"`).

`authors` keeps only the commits of the names given; `exclude-authors` drops those of the names
given. Both combine with the path filter (bot/digest/pathfilter.py): a commit is kept when both
keep it. Pure: names in, a filter or an AuthorError out; an author in, a yes or no out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_AUTHORS = 20  # per option, like MAX_GLOBS: a longer list is a mistake
MAX_AUTHOR_CHARS = 100  # GitHub logins are at most 39 characters; git names are rarely over 60

_BOT = re.compile(r"\[bot\]$")


class AuthorError(ValueError):
    """A name that cannot be used; `reason` is the catalogue key (authors.*) saying why."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


def normalise(name: str) -> str:
    """The name as matched and shown: spaces collapsed, a leading `@` dropped. Raises AuthorError."""
    n = " ".join(name.split()).removeprefix("@").strip()
    if not n:
        raise AuthorError(name, "name_empty")
    if len(n) > MAX_AUTHOR_CHARS:
        raise AuthorError(name, "name_long")
    if any(ord(ch) < 32 or ch in "<>" for ch in n):  # `<>`: an e-mail address, or a chat's markup
        raise AuthorError(name, "name_chars")
    return n


def _key(name: str) -> str:
    """What is compared: case folded, `[bot]` left off."""
    return _BOT.sub("", " ".join(name.split()).casefold().removeprefix("@"))


@dataclass(frozen=True)
class AuthorFilter:
    authors: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.authors or self.exclude)

    @classmethod
    def of(cls, authors: Iterable[str] = (), exclude: Iterable[str] = ()) -> AuthorFilter:
        return cls(
            tuple(dict.fromkeys(normalise(n) for n in authors or ())),
            tuple(dict.fromkeys(normalise(n) for n in exclude or ())),
        )

    def matches(self, names: Iterable[str], author: str, login: str = "") -> bool:
        ids = {_key(author), _key(login)} - {""}
        return any(_key(n) in ids for n in names)

    def keeps(self, author: str, login: str = "") -> bool:
        """Whether a commit by this author (name, login) belongs in the digest."""
        if self.authors and not self.matches(self.authors, author, login):
            return False
        return not (self.exclude and self.matches(self.exclude, author, login))

    def key(self) -> str:
        """For cache keys and job ids: filters that keep the same commits have equal keys ('' for
        none): `Ada`, `ada` and `@ada` are one name, as `dependabot` and `dependabot[bot]` are."""
        if not self:
            return ""
        names = [sorted({_key(n) for n in self.authors}), sorted({_key(n) for n in self.exclude})]
        return "a:" + json.dumps(names, ensure_ascii=False)


def as_typed(names: Iterable[str]) -> list[str]:
    """The names as a command takes them back: quoted when they hold a space."""
    return [f'"{n}"' if " " in n else n for n in names]

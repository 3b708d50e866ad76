"""A range of refs as a Window: `A..B` (tags, branches or SHAs) digests exactly the first-parent
commits of A..B, and `release [TAG]` is the range from the tag before TAG to TAG.

Both ends are resolved once, to full SHAs (so a range's digest and analyses are cached for good:
the SHAs never change). Bad input is one sentence from the catalogue: a ref that names nothing, a
range whose ends are reversed (B comes before A) or unrelated (no common history), a `release`
without tags.

Many projects tag releases on release branches (mypy, pytest, CPython): v1.19.1 is then not an
ancestor of v1.20.0, and `v1.19.1..v1.20.0` is still the upgrade — the commits v1.20.0 has and
v1.19.1 has not, as `git log A..B` lists them. So a range's ends may be on diverged lines as long
as they share history; and `release TAG` takes the release before TAG in version order (within
TAG's family of tags: `core-v2.46.0` is not a release of `v2.13.0`'s line), never "the nearest tag
on its first-parent line", which on a release branch is years old.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Protocol

from ..core.models import Commit, NotFoundError, UsageError, Window
from ..core.window import split_ref_range, zone
from ..i18n import echo, phrase


class RangeSource(Protocol):
    """What a source offers for ranges (localgit.py, github/source.py)."""

    name: str

    async def resolve_ref(self, ref: str) -> Commit: ...

    async def relation(self, base: str, head: str) -> str:
        """How head stands to base: "ahead" (base is its ancestor), "identical", "behind",
        "diverged" (both have commits of their own, with common history) or "unrelated"."""
        ...

    async def release_tags(self, tag: str | None) -> tuple[str | None, str]: ...


async def range_window(source: RangeSource, spec: str, tz: str) -> Window:
    """`A..B` resolved in `source`: a Window carrying both SHAs, labelled as typed, spanning the
    ends' committer dates. UsageError / NotFoundError (one sentence) when it names no range."""
    first, last = split_ref_range(spec)
    zone(tz)
    base = await source.resolve_ref(first)
    head = await source.resolve_ref(last)
    if base.sha != head.sha:
        relation = await source.relation(base.sha, head.sha)
        # diverged ends (release branches) are a range, unless they are two releases typed the
        # wrong way round: `v1.20.0..v1.19.1` would list the old branch's own few commits
        backwards = relation == "diverged" and later_release(first, last)
        if relation == "behind" or backwards:
            raise UsageError(phrase("errors.range_reversed", value=echo(spec), first=first, last=last))
        if relation == "unrelated":
            raise UsageError(phrase("errors.range_unrelated", first=first, last=last, repo=source.name))
    start = min(base.committed_at, head.committed_at).astimezone(zone(tz))
    end = (head.committed_at + timedelta(seconds=1)).astimezone(zone(tz))
    return Window(start=start, end=max(end, start), tz=tz, label=spec.strip(), base=base.sha, head=head.sha)


async def release_window(source: RangeSource, tag: str | None, tz: str) -> Window:
    """`release [TAG]`: from the tag before TAG (default: the newest tag) to TAG."""
    before, tag = await source.release_tags(tag)
    if before is None:
        raise UsageError(phrase("errors.first_tag", tag=tag, repo=source.name))
    return await range_window(source, f"{before}..{tag}", tz)


def narrower(commits: list[Commit], limit: int, spec: str) -> str:
    """The newest `limit` commits of a range (newest first) as a range: `<sha>..B`, B as typed."""
    _first, last = split_ref_range(spec)
    return f"{commits[limit].sha[:12]}..{last}"


_NUMBERS = re.compile(r"\d+|[^\d]+")
_FAMILY = re.compile(r"^\D*")  # what a tag says before its first digit: `v`, `core-v`, `release-`, ``
_FINAL = re.compile(r"^\d+(?:[.\-_]\d+)*$")  # after it, a final release is numbers alone
_VERSION = re.compile(r"^\d+(?:\.\d+)+")  # a version at all: dotted numbers first (not a SHA)


def family(tag: str) -> str:
    """The line of releases a tag belongs to: its words before the first digit, in lower case
    (`v0.11.9` and `V1.0` are one family, `core-v2.46.0` another)."""
    return _FAMILY.match(tag).group(0).lower()  # type: ignore[union-attr]  # \D* always matches


def is_final(tag: str) -> bool:
    """A release, not a pre-release: `1.20.0`, `v26.1`; not `1.0rc1`, `9.1.0.dev0`, `2.13.0b3`."""
    return bool(_FINAL.match(tag[len(family(tag)) :]))


def main_family(tags: list[str]) -> str:
    """The family with the most final releases (a repository's own, beside a sub-project's or a
    vendored package's); then the one with the most tags, then `v`, then bare numbers."""
    finals: dict[str, int] = {}
    total: dict[str, int] = {}
    for t in tags:
        f = family(t)
        finals[f] = finals.get(f, 0) + is_final(t)
        total[f] = total.get(f, 0) + 1
    return max(total, key=lambda f: (finals[f], total[f], f == "v", f == ""))


def newest_release(tags: list[str]) -> str | None:
    """`release` without a tag: the highest final release of the main family (else its highest
    tag, for a project that has only pre-releases so far)."""
    if not tags:
        return None
    main = main_family(tags)
    mine = [t for t in tags if family(t) == main]
    finals = [t for t in mine if is_final(t)]
    return max(finals or mine, key=version_key)


def previous_release(tags: list[str], tag: str) -> str | None:
    """The release before `tag`: the highest tag of its family below it in version order; for a
    final release only a final one (an upgrade from 1.19.1 to 1.20.0, not from 1.20.0rc2)."""
    key, fam, final = version_key(tag), family(tag), is_final(tag)
    lower = [t for t in tags if family(t) == fam and version_key(t) < key and (is_final(t) or not final)]
    return max(lower, key=version_key) if lower else None


def release_pair(tags: list[str], tag: str | None, repo: str) -> tuple[str | None, str]:
    """`release [TAG]` from a host's tag names: (the release before, TAG or the newest release);
    NotFoundError naming `repo` when it has no tags or not this one."""
    if not tags:
        raise NotFoundError(phrase("errors.no_tags", repo=repo))
    if tag is None:
        tag = newest_release(tags) or tags[0]
    elif tag not in tags:
        raise NotFoundError(phrase("errors.no_tag", tag=tag, repo=repo))
    return previous_release(tags, tag), tag


def later_release(first: str, last: str) -> bool:
    """Both ends name versions of one family (`v1.20.0`, `release-1.19`; not SHAs or branch
    names), and the first is the later one."""
    return (
        family(first) == family(last)
        and all(_VERSION.match(t[len(family(t)) :]) for t in (first, last))
        and version_key(first) > version_key(last)
    )


def version_key(tag: str) -> tuple:
    """A tag's place among versions: `v0.11.10` after `v0.11.9`, a pre-release (`1.0rc1`) before
    its release (`1.0`)."""
    key: list[tuple[int, int, str]] = []
    for part in _NUMBERS.findall(tag.lstrip("vV")):
        if part.isdigit():
            key.append((2, int(part), ""))
        elif part.strip(".-_+"):
            key.append((0, 0, part.strip(".-_+").lower()))  # a pre-release word: before the end
    key.append((1, 0, ""))  # the end: after a pre-release word, before a further number
    return tuple(key)

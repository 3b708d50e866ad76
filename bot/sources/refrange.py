"""A range of refs as a Window: `A..B` (tags, branches or SHAs) digests exactly the first-parent
commits of A..B, and `release [TAG]` is the range from the tag before TAG to TAG.

Both ends are resolved once, to full SHAs (so a range's digest and analyses are cached for good:
the SHAs never change). Bad input is one sentence from the catalogue: a ref that names nothing, a
range whose ends are reversed (B comes before A) or unrelated (A is not an ancestor of B), a
`release` without tags.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Protocol

from ..core.models import Commit, UsageError, Window
from ..core.window import split_ref_range, zone
from ..i18n import echo, phrase


class RangeSource(Protocol):
    """What a source offers for ranges (localgit.py, github/source.py)."""

    name: str

    async def resolve_ref(self, ref: str) -> Commit: ...

    async def is_ancestor(self, older: str, newer: str) -> bool: ...

    async def release_tags(self, tag: str | None) -> tuple[str | None, str]: ...


async def range_window(source: RangeSource, spec: str, tz: str) -> Window:
    """`A..B` resolved in `source`: a Window carrying both SHAs, labelled as typed, spanning the
    ends' committer dates. UsageError / NotFoundError (one sentence) when it names no range."""
    first, last = split_ref_range(spec)
    zone(tz)
    base = await source.resolve_ref(first)
    head = await source.resolve_ref(last)
    if base.sha != head.sha and not await source.is_ancestor(base.sha, head.sha):
        if await source.is_ancestor(head.sha, base.sha):
            raise UsageError(phrase("errors.range_reversed", value=echo(spec), first=first, last=last))
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


def previous_by_version(tags: list[str], tag: str) -> str | None:
    """The greatest tag below `tag` in version order (for a source that cannot walk ancestry
    cheaply); None when `tag` is the lowest."""
    lower = [t for t in tags if t != tag and version_key(t) < version_key(tag)]
    return max(lower, key=version_key) if lower else None

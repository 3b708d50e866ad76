"""The weekly roll-up: a week's digest as one message — its high and medium commits grouped by
area, each with its day; the dependency bots' lines; one line counting the low commits, with the
report link. The lows are never listed one by one.

An area is where a commit changed the most lines: an area of the repository profile
(`[areas]` in `.digest.toml`, e.g. `resolver = ["crates/uv-resolver/"]`) when one matches, else
its top directory, two levels deep for nested paths (`crates/uv-resolver`, `docs`, `.github/workflows`).
Files in the repository root are the root area. Areas come in order of importance (most high
commits, then most commits); inside one, high before medium, then by time.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

from ..core.chat_platform import ROOT_AREA, UNKNOWN_AREA, WeekRollup, entries_at_least
from ..core.models import BotError, Digest, DigestEntry, FileChange, Importance
from .noise import collapse


def area_for(files: Sequence[FileChange], profile=None) -> str:
    """The area of a commit: the profile's, or the top directory, that holds most changed lines."""
    lines: Counter = Counter()
    named = getattr(profile, "areas", None) or {}
    for f in files:
        area = next((name for name, prefixes in named.items() if any(_under(f.path, p) for p in prefixes)), None)
        lines[area or _top_directory(f.path)] += f.changes or 1
    if not lines:
        return UNKNOWN_AREA
    return sorted(lines.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _under(path: str, prefix: str) -> bool:
    path, prefix = path.strip("/"), prefix.strip().strip("/")
    return path == prefix or path.startswith(prefix + "/")


def _top_directory(path: str) -> str:
    parts = path.strip("/").split("/")
    if len(parts) == 1:
        return ROOT_AREA
    return "/".join(parts[:2]) if len(parts) >= 3 else parts[0]


async def areas_of(builder, source, entries: Sequence[DigestEntry]) -> dict[str, str]:
    """sha → area for these entries; files come through the builder's cache (the digest just read
    them), a few at a time."""
    profile = await builder.profile(source)
    slots = asyncio.Semaphore(max(1, builder.settings.analysis_concurrency))

    async def one(entry: DigestEntry) -> str:
        async with slots:
            try:
                files = await builder.files(source, entry.commit.sha)
            except BotError:
                return UNKNOWN_AREA
        return area_for(files, profile)

    found = await asyncio.gather(*(one(e) for e in entries))
    return {e.commit.sha: a for e, a in zip(entries, found)}


def shown_entries(digest: Digest, min_importance: str = "low") -> list[DigestEntry]:
    """The commits a roll-up can show: high and medium (at least `min_importance`)."""
    return [e for e in entries_at_least(digest.entries, min_importance) if e.importance is not Importance.LOW]


def rollup(
    digest: Digest,
    area_of: dict[str, str],
    *,
    min_importance: str = "low",
    bots: str = "collapse",
    report_url: str | None = None,
    more_how: str = "",
) -> WeekRollup:
    """The roll-up's content, pure. A bot's routine commits (its lows too, when the channel wants
    lows at all) become its one line; the remaining lows are a count."""
    wanted = entries_at_least(digest.entries, min_importance)
    kept, groups = collapse(wanted, bots)
    notable = [e for e in kept if e.importance is not Importance.LOW]
    low = sum(1 for e in kept if e.importance is Importance.LOW)
    by_area: dict[str, list[DigestEntry]] = {}
    for e in notable:
        by_area.setdefault(area_of.get(e.commit.sha, UNKNOWN_AREA), []).append(e)
    for entries in by_area.values():
        entries.sort(key=lambda e: (e.importance.rank, e.commit.committed_at))
    order = sorted(
        by_area.items(),
        key=lambda kv: (
            -sum(e.importance is Importance.HIGH for e in kv[1]),
            -len(kv[1]),
            kv[0] in (ROOT_AREA, UNKNOWN_AREA),
            kv[0],
        ),
    )
    return WeekRollup(digest, tuple((a, tuple(es)) for a, es in order), tuple(groups), low, more_how, report_url)

"""Readers' level corrections laid over a digest: the one place a correction changes what is shown.

A digest is built (or read from the cache) as the analyses made it; `overlay` then gives each
entry whose commit has an effective correction the corrected level, with who set it and what the
analysis had said (`DigestEntry.corrected_by` / `corrected_from`). The cached digest stays as the
analyses made it, so a correction made after the cache was filled still shows.

Overlaying is idempotent and reversible: an entry already overlaid is first taken back to the
analysis's own level, so a posted message (kept overlaid) can be overlaid again with the
corrections in force now. A correction back to the analysis's own level shows nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..core.chat_platform import BotUpdates, CommitDetail, CommitDetails, Content, DigestParent, LowCommits, WeekRollup
from ..core.models import Digest, DigestEntry, Importance

Effective = Mapping[str, object]  # sha → a Correction (anything with .level and .who)


def original(entry: DigestEntry) -> Importance:
    """The level the analysis gave, whatever correction is laid over the entry."""
    return entry.corrected_from or entry.importance


def correct(entry: DigestEntry, correction) -> DigestEntry:
    """`entry` with `correction` (None: none) laid over it instead of any earlier one."""
    if entry.analysis is None:
        return entry  # no level of its own to correct (only when even the offline analysis failed)
    was = original(entry)
    level = Importance(correction.level) if correction is not None else was
    if level is was:
        return replace(entry, analysis=replace(entry.analysis, importance=was), corrected_by="", corrected_from=None)
    return replace(
        entry,
        analysis=replace(entry.analysis, importance=level),
        corrected_by=correction.who,
        corrected_from=was,
    )


def _each(entries, effective: Effective) -> tuple[DigestEntry, ...]:
    return tuple(correct(e, effective.get(e.commit.sha)) for e in entries)


def overlay(digest: Digest, effective: Effective) -> Digest:
    """The digest with every effective correction laid over its entries (counts and groups follow:
    they are read from the entries' levels)."""
    if not effective and not any(e.corrected_from for e in digest.entries):
        return digest
    return replace(digest, entries=_each(digest.entries, effective))


def overlay_content(content: Content, effective: Effective) -> Content:
    """A chat content with the corrections laid over every commit it shows."""
    if isinstance(content, DigestParent):
        return replace(content, digest=overlay(content.digest, effective))
    if isinstance(content, (CommitDetail, CommitDetails)):
        return replace(
            content,
            digest=overlay(content.digest, effective),
            entry=correct(content.entry, effective.get(content.entry.commit.sha)),
        )
    if isinstance(content, LowCommits):
        return replace(content, digest=overlay(content.digest, effective), entries=_each(content.entries, effective))
    if isinstance(content, BotUpdates):
        groups = tuple(replace(g, entries=_each(g.entries, effective)) for g in content.groups)
        return replace(content, digest=overlay(content.digest, effective), groups=groups)
    if isinstance(content, WeekRollup):
        areas = tuple((area, _each(entries, effective)) for area, entries in content.areas)
        return replace(content, digest=overlay(content.digest, effective), areas=areas)
    return content


def entries_of(content: Content | None) -> tuple[DigestEntry, ...]:
    """The commits a content shows (what a tap on it may name)."""
    if isinstance(content, (CommitDetail, CommitDetails)):
        return (content.entry,)
    if isinstance(content, LowCommits):
        return content.entries
    if isinstance(content, BotUpdates):
        return tuple(e for g in content.groups for e in g.entries)
    if isinstance(content, WeekRollup):
        return tuple(e for _, entries in content.areas for e in entries)
    if isinstance(content, DigestParent):
        return content.digest.entries
    return ()

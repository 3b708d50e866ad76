"""Readers' level corrections laid over a digest: the one place a correction changes what is shown.

A digest is built (or read from the cache) as the analyses made it; `overlay` then gives each
entry whose commit has an effective correction the corrected level, with who set it and what the
analysis had said (`DigestEntry.corrected_by` / `corrected_from` / `corrected_reason`), and a
reason that fits the new level ("corrected to low by a reader; the bot had said high: …"). What
is derived from the levels is drawn again from the corrected ones: the counts and groups (read
from the entries), and the headline with its main-risks line (bot/analysis/summary.py's rule-based
bullets; a model's headline is put aside while a correction shows, and comes back when none does).
The cached digest stays as the analyses made it, so a correction made after the cache was filled
still shows.

Overlaying is idempotent and reversible: an entry already overlaid is first taken back to the
analysis's own level and reason, so a posted message (kept overlaid) can be overlaid again with
the corrections in force now. A correction back to the analysis's own level shows nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..analysis.summary import offline_headline
from ..core.chat_platform import BotUpdates, CommitDetail, CommitDetails, Content, DigestParent, LowCommits, WeekRollup
from ..core.models import Digest, DigestEntry, Importance
from ..i18n import text

Effective = Mapping[str, object]  # sha → a Correction (anything with .level and .who)


def original(entry: DigestEntry) -> Importance:
    """The level the analysis gave, whatever correction is laid over the entry."""
    return entry.corrected_from or entry.importance


def original_reason(entry: DigestEntry) -> str:
    """The reason the analysis gave, whatever correction is laid over the entry."""
    if entry.analysis is None:
        return entry.error
    if entry.corrected_from is not None and entry.corrected_reason is not None:
        return entry.corrected_reason
    return entry.analysis.importance_reason


def corrected_reason(lang: str, level: Importance, was: Importance, said: str) -> str:
    """The reason a corrected commit shows: the new level, and what the bot had said."""
    words = {imp: text(lang, f"levels.word_{imp.value}") for imp in Importance}
    said = said.strip()
    if not said:
        return text(lang, "levels.reason_bare", level=words[level], was=words[was])
    return text(lang, "levels.reason", level=words[level], was=words[was], said=said)


def correct(entry: DigestEntry, correction, lang: str) -> DigestEntry:
    """`entry` with `correction` (None: none) laid over it instead of any earlier one; its reason
    in `lang` (the digest's)."""
    if entry.analysis is None:
        return entry  # no level of its own to correct (only when even the offline analysis failed)
    was, said = original(entry), original_reason(entry)
    level = Importance(correction.level) if correction is not None else was
    if level is was:
        analysis = replace(entry.analysis, importance=was, importance_reason=said)
        return replace(entry, analysis=analysis, corrected_by="", corrected_from=None, corrected_reason=None)
    return replace(
        entry,
        analysis=replace(entry.analysis, importance=level, importance_reason=corrected_reason(lang, level, was, said)),
        corrected_by=correction.who,
        corrected_from=was,
        corrected_reason=said,
    )


def _each(entries, effective: Effective, lang: str) -> tuple[DigestEntry, ...]:
    return tuple(correct(e, effective.get(e.commit.sha), lang) for e in entries)


def _corrected(entries) -> bool:
    return any(e.corrected_from is not None for e in entries)


def redrawn_headline(digest: Digest) -> Digest:
    """The headline as the entries' levels now call for: while a correction shows, the rule-based
    bullets of the corrected levels (a model's bullets put aside); without one, the bullets the
    digest was built with (a model's brought back, rule-based ones drawn again). A digest drawn
    without a headline (a thread reply's) keeps none."""
    if not (digest.headline or digest.uncorrected_headline):
        return digest
    corrected = _corrected(digest.entries)
    if digest.uncorrected_headline and not corrected:  # the model's own bullets are right again
        return replace(digest, headline=digest.uncorrected_headline, headline_origin="llm", uncorrected_headline=())
    bullets = tuple(offline_headline(digest.entries, digest.lang))
    if digest.headline_origin == "llm" and corrected:
        return replace(digest, headline=bullets, headline_origin="corrected", uncorrected_headline=digest.headline)
    return replace(digest, headline=bullets)


def overlay(digest: Digest, effective: Effective) -> Digest:
    """The digest with every effective correction laid over its entries; the counts and groups
    follow (they are read from the entries' levels), and so does the headline."""
    before = _corrected(digest.entries)
    if not effective and not before:
        return digest
    entries = _each(digest.entries, effective, digest.lang)
    out = replace(digest, entries=entries)
    if before or _corrected(entries):
        out = redrawn_headline(out)
    return out


def overlay_content(content: Content, effective: Effective) -> Content:
    """A chat content with the corrections laid over every commit it shows."""
    if isinstance(content, DigestParent):
        return replace(content, digest=overlay(content.digest, effective))
    if isinstance(content, (CommitDetail, CommitDetails)):
        return replace(
            content,
            digest=overlay(content.digest, effective),
            entry=correct(content.entry, effective.get(content.entry.commit.sha), content.digest.lang),
        )
    if isinstance(content, LowCommits):
        entries = _each(content.entries, effective, content.digest.lang)
        return replace(content, digest=overlay(content.digest, effective), entries=entries)
    if isinstance(content, BotUpdates):
        groups = tuple(replace(g, entries=_each(g.entries, effective, content.digest.lang)) for g in content.groups)
        return replace(content, digest=overlay(content.digest, effective), groups=groups)
    if isinstance(content, WeekRollup):
        return _rollup(content, effective)
    return content


def _rollup(content: WeekRollup, effective: Effective) -> WeekRollup:
    """A roll-up lists the commits above low by area and counts the low ones: a commit corrected to
    low leaves its area for the count. (A roll-up is drawn from a corrected digest: this redraws
    one drawn before a correction; a low commit corrected up has no area in it to join.)"""
    digest = overlay(content.digest, effective)
    lang = digest.lang
    areas: list[tuple[str, tuple[DigestEntry, ...]]] = []
    low = content.low
    for area, entries in content.areas:
        kept = []
        for e in _each(entries, effective, lang):
            if e.importance is Importance.LOW:
                low += 1
            else:
                kept.append(e)
        if kept:
            areas.append((area, tuple(sorted(kept, key=lambda e: (e.importance.rank, e.commit.committed_at)))))
    return replace(content, digest=digest, areas=tuple(areas), low=low)


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

"""What a pass retries, and a shown digest brought up to the kept one (pure functions).

Retried: an entry whose analysis is a fallback for a reason that may pass — the LLM failed
(timeout, unreachable, http_error, context, rejected) or the diff could not be read
(rate_limited, source). Not retried: the month's token budget ("budget": the operator's cap,
not a failure) and analyses made without an LLM by design ("offline"). An entry counts as
improved only when the retry gives a first-class analysis; a retry that fails again changes
nothing the reader sees.

A shown digest (a chat message's, a report page's copy, possibly read against a fork or with
readers' corrections laid over it) takes the kept digest's improved analyses by commit, its
notices through the sentences they replaced (`renamed`), and its headline if that was improved;
everything else it shows (fork hunks, bots' lines, corrections) stays its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..core.chat_platform import BotUpdates, CommitDetail, Content, DigestParent, LowCommits
from ..core.models import Digest, DigestEntry
from .notices import LLM_REASONS, SOURCE_REASONS

RETRIED = LLM_REASONS + SOURCE_REASONS


def retryable(entry: DigestEntry) -> bool:
    a = entry.analysis
    return a is not None and a.origin == "fallback" and a.fallback_reason in RETRIED


def succeeded(entry: DigestEntry) -> bool:
    """A retry that gave a first-class analysis (the LLM's, or the rules' on a diff now read)."""
    a = entry.analysis
    return a is not None and not entry.error and a.origin != "fallback" and a.fallback_reason != "budget"


def improved(old: DigestEntry, new: DigestEntry, at: str) -> DigestEntry:
    """The retried entry, noting when it replaced which fallback."""
    assert new.analysis is not None and old.analysis is not None  # succeeded(new) and retryable(old)
    analysis = replace(new.analysis, improved_at=at, improved_from=old.analysis.fallback_reason)
    return replace(new, analysis=analysis, owners=old.owners)  # CODEOWNERS was read once, for the digest


def renotice(notices: Sequence[str], renamed: Mapping[str, str]) -> tuple[str, ...]:
    """`notices` with each sentence a pass recounted replaced ('' : dropped)."""
    return tuple(n for n in (renamed.get(x, x) for x in notices) if n)


def compose(earlier: Mapping[str, str], now: Mapping[str, str]) -> dict[str, str]:
    """Renamings across passes: a → b then b → c is a → c (a place may be several passes behind)."""
    out = {a: now.get(b, b) if b else b for a, b in earlier.items()}
    out.update(now)
    return out


def _entry(entry: DigestEntry, kept: Mapping[str, DigestEntry]) -> DigestEntry:
    new = kept.get(entry.commit.sha)
    if new is None or new.analysis is None:
        return entry
    if entry.analysis is not None and entry.analysis.improved_at == new.analysis.improved_at:
        return entry  # drawn with this improvement already (its level may show a correction)
    # The reader's correction, if any, is laid over again by the caller from the corrections in force.
    return replace(
        entry,
        analysis=new.analysis,
        error=new.error,
        updates=new.updates or entry.updates,
        corrected_by="",
        corrected_from=None,
        corrected_reason=None,
    )


def _improved_of(kept: Digest) -> dict[str, DigestEntry]:
    return {e.commit.sha: e for e in kept.entries if e.analysis is not None and e.analysis.improved_at}


def _entries(entries, kept: Mapping[str, DigestEntry]) -> tuple[DigestEntry, ...]:
    return tuple(_entry(e, kept) for e in entries)


def refresh(shown: Digest, kept: Digest, renamed: Mapping[str, str]) -> Digest:
    """`shown` with what the kept digest improved since it was drawn."""
    better = _improved_of(kept)
    out = replace(shown, entries=_entries(shown.entries, better), notices=renotice(shown.notices, renamed))
    if shown.headline_origin == "fallback" and kept.headline_origin == "llm" and shown.headline:
        out = replace(out, headline=kept.headline, headline_origin="llm", headline_fallback="")
    return replace(out, revision=kept.revision)


def changed(before: Digest, after: Digest) -> bool:
    return replace(after, revision=before.revision) != before


def refresh_content(content: Content, kept: Digest, renamed: Mapping[str, str]) -> Content | None:
    """A posted chat content brought up to the kept digest; None when nothing it shows changed
    (the message is left alone: no edit)."""
    better = _improved_of(kept)
    if isinstance(content, DigestParent):
        digest = refresh(content.digest, kept, renamed)
        return replace(content, digest=digest) if changed(content.digest, digest) else None
    if isinstance(content, CommitDetail):
        entry = _entry(content.entry, better)
        if entry == content.entry:
            return None
        return replace(content, digest=refresh(content.digest, kept, renamed), entry=entry)
    if isinstance(content, LowCommits):
        entries = _entries(content.entries, better)
        if entries == content.entries:
            return None
        return replace(content, digest=refresh(content.digest, kept, renamed), entries=entries)
    if isinstance(content, BotUpdates):
        groups = tuple(replace(g, entries=_entries(g.entries, better)) for g in content.groups)
        if groups == content.groups:
            return None
        return replace(content, digest=refresh(content.digest, kept, renamed), groups=groups)
    return None  # kinds bot/delivery/posted.py does not keep

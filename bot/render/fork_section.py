"""The Downstream section and the per-commit flag, as plain (unescaped) text every renderer shares;
each renderer escapes and lays it out its own way. Sentences come from bot/i18n [downstream]."""

from __future__ import annotations

from ..core.models import Digest, DigestEntry, Downstream
from ..i18n import text


def fork_label(d: Digest) -> str:
    return f"{d.fork.name}@{d.fork.branch}" if d.fork else ""


def flagged(d: Digest) -> list[DigestEntry]:
    """The entries touching fork-patched files: conflicts first, then in digest order."""
    hits = [e for e in d.entries if e.downstream]
    return sorted(hits, key=lambda e: not (e.downstream and e.downstream.conflict))


def hunks(lang: str, n: int) -> str:
    return text(lang, "downstream.hunks_one") if n == 1 else text(lang, "downstream.hunks_many", n=n)


def heading(d: Digest) -> str:
    return text(d.lang, "downstream.heading", fork=fork_label(d))


def intro(d: Digest) -> str:
    if d.fork is None:
        return ""
    hits = flagged(d)
    fork, files, base = fork_label(d), d.fork.files, d.fork.merge_base[:7]
    if not hits:
        return text(d.lang, "downstream.none", fork=fork, files=files, base=base)
    conflicts = sum(1 for e in hits if e.downstream and e.downstream.conflict)
    return text(d.lang, "downstream.intro", touching=len(hits), conflicts=conflicts, fork=fork, files=files, base=base)


def line(d: Digest, ds: Downstream | None) -> str:
    """`⚠ touches vllm/engine/arg_utils.py, which org/our-fork@main patches in 3 hunks — conflicts`"""
    if ds is None:
        return ""
    lang = d.lang
    verdict = "downstream.verdict_conflict" if ds.conflict else "downstream.verdict_clean"
    return text(
        lang,
        "downstream.line",
        mark="⚠️" if ds.conflict else "ℹ️",
        files=", ".join(ds.patched_files),
        fork=fork_label(d),
        hunks=hunks(lang, ds.hunks),
        verdict=text(lang, verdict),
    )


def flag(d: Digest, e: DigestEntry) -> str:
    """The line on a commit's card ('' when the commit touches nothing the fork patches)."""
    ds = e.downstream
    if not ds or not d.fork:
        return ""
    key = "downstream.flag_conflict" if ds.conflict else "downstream.flag_touch"
    return text(d.lang, key, fork=fork_label(d), files=", ".join(ds.patched_files))

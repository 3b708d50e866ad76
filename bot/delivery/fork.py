"""A subscription's fork in its deliveries: the digest read against the fork, and a direct
message to whoever named the fork for each upstream commit that conflicts with it — once per
(person, fork, commit), however often the digest is delivered again."""

from __future__ import annotations

import logging

from settings import Settings

from ..core.chat_platform import Notice
from ..core.models import BotError, Digest, replace
from ..fork import read_downstream
from ..fork.naming import parse_fork
from ..i18n import localize, text
from ..render.fork_section import fork_label, hunks

log = logging.getLogger(__name__)

TOLD_TTL = 40 * 86400  # a commit is news for a day; the marker outlives any re-delivery


async def downstream_of(settings: Settings, spec, digest: Digest, source) -> Digest:
    """The digest with its Downstream facts; a fork that cannot be read costs only a notice."""
    try:
        return await read_downstream(digest, source, parse_fork(spec.fork, spec.lang, settings), settings, spec.lang)
    except BotError as exc:
        log.warning("downstream for %s against %s skipped: %s", spec.repo, spec.fork, exc)
        notice = text(spec.lang, "downstream.notice_failed", fork=spec.fork, reason=localize(exc, spec.lang))
        return replace(digest, notices=digest.notices + (notice,))


async def tell_conflicts(platform, store, spec, digest: Digest) -> int:
    """A direct message to `spec.owner` per conflicting commit not told before; how many."""
    told = 0
    for entry in digest.entries:
        ds = entry.downstream
        if not ds or not ds.conflict:
            continue
        marker = store.k("downstream-told", spec.platform, spec.owner, spec.fork.lower(), entry.commit.sha)
        if not await store.claim(marker, TOLD_TTL):
            continue
        c = entry.commit
        line = text(
            spec.lang,
            "downstream.dm",
            repo=digest.repo,
            sha=c.short_sha,
            title=c.title,
            fork=fork_label(digest),
            files=", ".join(ds.patched_files),
            hunks=hunks(spec.lang, ds.hunks),
        )
        try:
            await platform.send(spec.owner, Notice(line + (f"\n{c.url}" if c.url else ""), "info", spec.lang))
        except BotError as exc:  # the digest is posted already: a DM that fails must not undo that
            log.warning("could not tell %s of %s: %s", spec.owner, c.short_sha, exc)
            continue
        told += 1
    return told

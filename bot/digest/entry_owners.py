"""Each digest entry's code owners, from the repository's CODEOWNERS (bot/core/codeowners_file.py).

The file is read once per digest, as of the digest's NEWEST commit (GitHub's lookup order:
`.github/CODEOWNERS`, `CODEOWNERS`, `docs/CODEOWNERS`; GitLab's: `CODEOWNERS`, `docs/`, `.gitlab/`,
read with its sections), through the commit source's
`read_file(path, ref)`, and cached in Redis by (repository, commit) like the commits' files, so
the day's other digests (other languages, filters) read it from the cache. A commit's owners
are those of every path it touches (renames: both paths). The file never stops a digest: an
unreadable file or line is skipped, and the digest says in one sentence how many lines were.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from ..core.codeowners_file import GITLAB_LOCATIONS, LOCATIONS, CodeOwners, parse
from ..core.links import GITLAB_LINKS
from ..core.models import BotError, DigestEntry, FileChange
from ..core.store import FILES_TTL, Store, StoreUnavailable
from ..i18n import Count, text
from ..sources import CommitSource
from .pathfilter import touched_paths

log = logging.getLogger(__name__)

Files = Callable[[CommitSource, str], Awaitable[tuple[FileChange, ...]]]


def is_gitlab(source) -> bool:
    """GitLab's CODEOWNERS (its places, its sections) for a GitLab project, or a clone or mirror
    of one (its links are GitLab's)."""
    return source.cache_id.startswith("gitlab:") or getattr(source, "links", None) == GITLAB_LINKS


async def read_codeowners(store: Store, source, sha: str) -> CodeOwners:
    """The CODEOWNERS in force at `sha` (empty when the repository has none), through the cache."""
    gitlab = is_gitlab(source)
    key = store.k("codeowners", source.cache_id, sha)
    cached = await store.get_blob(key)
    if cached is None:
        cached = {"path": "", "text": ""}
        # both sources read a file at a commit; a source without files has no owners
        reader: Callable[[str, str], Awaitable[str | None]] | None = getattr(source, "read_file", None)
        for path in (GITLAB_LOCATIONS if gitlab else LOCATIONS) if reader is not None else ():
            found = await reader(path, sha) if reader is not None else None
            if found is not None:
                cached = {"path": path, "text": found}
                break
        await store.set_blob(key, cached, ttl=FILES_TTL)
    return parse(cached["text"], cached["path"], gitlab=gitlab) if cached["path"] else CodeOwners()


async def with_owners(
    store: Store, source, entries: Sequence[DigestEntry], files: Files, lang: str
) -> tuple[list[DigestEntry], str]:
    """(the entries with their owners, the notice about unreadable lines or '')."""
    if not entries:
        return list(entries), ""
    try:
        owners = await read_codeowners(store, source, entries[0].commit.sha)
    except StoreUnavailable:
        raise  # Redis away: a digest without owners would be kept as if it had none (builder._entry)
    except BotError as exc:  # the source could not read it: the digest goes on without owners
        log.warning("%s: CODEOWNERS not read (%s)", source.name, exc)
        return list(entries), ""
    if not owners.rules:
        return list(entries), notice(owners, lang)

    async def owned(entry: DigestEntry) -> DigestEntry:
        try:  # from the files cache the analyses filled; `files` bounds the fetches it makes
            touched = touched_paths(await files(source, entry.commit.sha))
        except StoreUnavailable:
            raise
        except BotError:
            return entry  # the entry says already that its files could not be read
        return replace(entry, owners=owners.owners_of_all(touched))

    return list(await asyncio.gather(*(owned(e) for e in entries))), notice(owners, lang)


def notice(owners: CodeOwners, lang: str) -> str:
    """One sentence when lines of the file were skipped ('' when none were)."""
    if not owners.skipped:
        return ""
    return text(lang, "owners.skipped_lines", lines=Count(owners.skipped, "owners.lines").say(lang), path=owners.path)

"""Any other git URL (Gitee, Gitea/Forgejo, Bitbucket, a company server) as a commit source: a bare
mirror the bot keeps under DATA_DIR/mirrors (the shared machinery of sources/mirror.py: bounded by
MIRROR_FETCH_TIMEOUT and MIRROR_MAX_MB, one fetch at a time across processes), read by the local
git source (localgit.py) on the bare repository.

Fetched before it is read when it may be stale: a window ending after the last fetch started (a
push of a minute ago is in today's digest; yesterday's digest after a fetch this morning fetches
nothing), a commit or ref it does not have yet. Every branch and tag is mirrored (a subscription's
branch, release ranges), and the remote's default branch becomes the mirror's HEAD.

Links follow the host (core/links.py `host_links`): GIT_LINK_TEMPLATES, else the well-known hosts'
styles, else none at all (the SHA alone, never a broken link).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path

from settings import Settings

from ..core.links import host_links
from ..core.models import Commit, NotFoundError, UsageError, Window
from ..i18n import phrase
from .giturl import GitUrl, parse_git_url
from .localgit import LocalGitSource
from .mirror import BareMirror, MirrorWords, base_env

WORDS = MirrorWords(
    failed="mirror.fetch_failed",
    timeout="mirror.fetch_timeout",
    too_large="mirror.too_large",
    no_branch="mirror.no_branch",
    no_repo="mirror.no_repo",
)
REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
_KEY = "all"  # one stamp: every fetch takes every branch and tag
_SYMREF = re.compile(r"^ref: refs/heads/(\S+)\s+HEAD$", re.M)


def mirror_path(data_dir: Path, url: GitUrl) -> Path:
    """DATA_DIR/mirrors/HOST+PATH-HASH.git: readable, unique per URL, no credentials (there are none)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "+", f"{url.web_host}/{url.path}")[:80]
    return Path(data_dir) / "mirrors" / f"{readable}-{hashlib.sha1(url.url.encode()).hexdigest()[:10]}.git"


def git_env(url: str) -> dict[str, str]:
    """git's environment for a mirror: the operator's credential helpers and ssh keys apply; only
    the network transports (never `ext::` or `file::`, whatever a URL says)."""
    return {**base_env(), "GIT_ALLOW_PROTOCOL": "http:https:ssh:git"}


class MirroredSource(LocalGitSource):
    def __init__(self, where: str, settings: Settings):
        url = parse_git_url(where)
        if url is None:  # the registry parsed it already: only a caller bypassing it gets here
            raise UsageError(phrase("mirror.not_a_url"))
        self.url = url
        self.mirror = BareMirror(
            mirror_path(settings.data_dir, url),
            url.url,
            timeout=settings.mirror_fetch_timeout,
            max_bytes=settings.mirror_max_mb * 1024 * 1024,
            interval=settings.mirror_fetch_interval,
            words=WORDS,
            env=git_env,
        )
        self.mirror.init()
        super().__init__(self.mirror.git_dir, settings)
        self.spec = url.url
        self.cache_id = f"url:{url.identity}"
        self.name = url.name
        self.links, web = host_links(url.web_host, settings.git_link_templates)
        if web is None and url.web_host != url.host:
            self.links, web = host_links(url.host, settings.git_link_templates)
        self.web_url = web.format(scheme=url.web_scheme, host=url.web_host, path=url.path) if web is not None else None

    # --- the mirror: fetched when what is asked may be newer than it -----------------------------
    def _refresh(self, needed: float | None, *, force: bool = False) -> bool:
        return self.mirror.fetch(self.url.url, REFSPECS, key=_KEY, needed=needed, force=force, after=self._set_head)

    async def refresh(self, needed: float | None = None, *, force: bool = False) -> bool:
        """Fetch unless the last fetch started after `needed` (a Unix time; None: now), less
        MIRROR_FETCH_INTERVAL. Returns whether this call fetched."""
        return await asyncio.to_thread(self._refresh, needed, force=force)

    def _set_head(self) -> None:
        """The remote's default branch as the mirror's HEAD (asked once; again if it went away)."""
        head = self.mirror.git("symbolic-ref", "-q", "HEAD").stdout.strip()
        if head and self.mirror.resolve(head):
            return
        code, out = self.mirror.run_bounded(["git", "ls-remote", "--symref", self.url.url, "HEAD"], self.url.url)
        match = _SYMREF.search(out) if code == 0 else None
        branches = self.mirror.git("for-each-ref", "--format=%(refname)", "refs/heads").stdout.split()
        target = f"refs/heads/{match.group(1)}" if match else next(iter(branches), "")
        if target:
            self.mirror.git("symbolic-ref", "HEAD", target)

    async def _ensure(self) -> None:
        """Fetched at least once (a first use), however old."""
        if self.mirror.last_fetch(_KEY) is None:
            await self.refresh(0.0)

    # --- CommitSource: the local reader, on a fresh enough mirror --------------------------------
    async def default_branch(self) -> str:
        await self._ensure()
        return await super().default_branch()

    async def list_commits(
        self, window: Window, branch: str | None = None, include_merges: bool = False
    ) -> list[Commit]:
        await self.refresh(None if window.is_range else window.end_utc.timestamp())
        return await super().list_commits(window, branch, include_merges)

    async def get_commit(self, ref: str) -> Commit:
        await self._ensure()
        try:
            return await super().get_commit(ref)
        except NotFoundError:
            if not await self.refresh():  # fresh already: it is not there
                raise
            return await super().get_commit(ref)

    async def resolve_ref(self, ref: str) -> Commit:
        await self._ensure()
        try:
            return await super().resolve_ref(ref)
        except NotFoundError:
            if not await self.refresh():
                raise
            return await super().resolve_ref(ref)

    async def pushed_since(self, base: str, head: str, include_merges: bool = False) -> list[Commit] | None:
        await self.refresh()
        return await super().pushed_since(base, head, include_merges)

    async def release_tags(self, tag: str | None) -> tuple[str | None, str]:
        await self.refresh()
        return await super().release_tags(tag)

    async def tip_before(self, before, branch: str | None = None) -> str | None:
        await self.refresh(before.timestamp())
        return await super().tip_before(before, branch)

    def fetched_at(self) -> float | None:
        return self.mirror.last_fetch(_KEY)


def clone_url(where: str, settings: Settings) -> str:
    """Where git fetches a URL the registry took: the URL itself (without credentials)."""
    return where

"""Commit sources: where a repository's commits and diffs come from.

`open_source` (opened.py) opens what the registry (registry.py) says a name is: a local git
repository (a path), GitLab (`gitlab:group/project`, a GitLab URL; python-gitlab) or GitHub
(`owner/name`; PyGithub). All return the same models with the same window semantics: membership by committer date,
half-open [start, end), merges excluded unless asked for, newest first.
"""

from __future__ import annotations

from typing import Protocol

from ..core.links import LinkStyle
from ..core.models import Commit, FileChange, Window


class CommitSource(Protocol):
    spec: str  # the repository as it was named to open_source (commands and buttons reuse it)
    name: str  # display name: owner/name or the directory's name
    cache_id: str  # stable identity for cache keys ("github:owner/name", "git:/abs/path")
    web_url: str | None  # https://github.com/owner/name when known
    links: LinkStyle  # how its host links a commit, a pull/merge request, a file (bot/core/links.py)

    async def default_branch(self) -> str: ...

    async def branches(self) -> list[str]:
        """The repository's branch names (what a subscription's `branch main release/*` matches)."""

    async def list_commits(
        self, window: Window, branch: str | None = None, include_merges: bool = False
    ) -> list[Commit]:
        """Commits whose committer date lies in the window, newest first."""

    async def get_files(self, sha: str) -> tuple[FileChange, ...]:
        """The commit's changed files with patches (first parent for merges)."""

    async def get_commit(self, ref: str) -> Commit:
        """Resolve a full or abbreviated SHA; NotFoundError when unknown."""

    async def resolve_ref(self, ref: str) -> Commit:
        """A tag, branch or SHA as its commit; NotFoundError naming it when there is none."""

    async def pushed_since(self, base: str, head: str, include_merges: bool = False) -> list[Commit] | None:
        """What a push brought: the commits reachable from `head` and not from `base`, newest first
        (merges only when asked), whatever their dates; None when `base` is not an ancestor of
        `head` (the branch was rewritten) or is unknown."""

    async def prefetch_prs(self, commits: list[Commit]) -> None:
        """Fetch the PRs of these commits in bulk ahead of `pr_description` (a day's worth of
        look-ups in a few requests); a source without PRs does nothing."""

    async def pr_description(self, number: int) -> str | None:
        """The body of PR #number, or None when the source has no PRs."""

    async def pr_commit(self, number: int) -> Commit | None:
        """The commit that landed PR #number on the default branch, or None when unknown."""


class SourceRegistry(Protocol):
    """Where a repository's source is opened once and kept (opened.py's Sources)."""

    def get(self, repo: str) -> CommitSource: ...

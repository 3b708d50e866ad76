"""Opening a repository's source (a local path is git, `owner/name` is GitHub), and the sources
this process has opened, one per repository for its lifetime (they hold HTTP pools), the most
recent few hundred kept: chat users can name any repository."""

from __future__ import annotations

import os
from collections import OrderedDict

from settings import Settings

from ..core.models import UsageError
from ..i18n import echo, phrase
from . import CommitSource, looks_like_github


def open_source(repo: str, settings: Settings) -> CommitSource:
    """A source for `repo`: an existing path is a local git repository, `owner/name` is GitHub."""
    repo = (repo or "").strip()
    if not repo:
        raise UsageError(phrase("errors.no_repo_given"))
    source: CommitSource
    if os.path.exists(os.path.expanduser(repo)):
        from .localgit import LocalGitSource

        source = LocalGitSource(os.path.expanduser(repo))
    elif looks_like_github(repo):
        from .github.source import GitHubSource

        source = GitHubSource(repo, settings)
    else:
        raise UsageError(phrase("errors.not_a_repo_or_path", value=echo(repo)))
    source.spec = repo
    return source


class Sources:
    def __init__(self, settings: Settings, limit: int = 256):
        self.settings = settings
        self.limit = limit
        self._open: OrderedDict[str, CommitSource] = OrderedDict()

    def get(self, repo: str) -> CommitSource:
        key = repo.strip()
        if key not in self._open:
            self._open[key] = open_source(key, self.settings)
            while len(self._open) > self.limit:
                self._open.popitem(last=False)
        self._open.move_to_end(key)
        return self._open[key]

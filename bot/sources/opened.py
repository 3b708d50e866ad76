"""Opening a repository's source (the registry, registry.py, says which host a name is), and the sources
this process has opened, one per repository for its lifetime (they hold HTTP pools), the most
recent few hundred kept: chat users can name any repository."""

from __future__ import annotations

from collections import OrderedDict

from settings import Settings

from . import CommitSource
from .registry import parse_repo


def open_source(repo: str, settings: Settings) -> CommitSource:
    """A source for `repo`, by the first registry entry that takes its name (an existing path
    first); UsageError, one sentence listing the accepted forms, when none does."""
    repo = (repo or "").strip()
    named = parse_repo(repo, settings)
    source = named.entry.open(named.where, settings)
    source.spec = repo if named.entry.keeps_typed else named.spec  # a URL: never with its credentials
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

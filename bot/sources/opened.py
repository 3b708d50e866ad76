"""The sources this process has opened, one per repository for its lifetime (they hold HTTP
pools), the most recent few hundred kept: chat users can name any repository."""

from __future__ import annotations

from collections import OrderedDict

from . import CommitSource, open_source


class Sources:
    def __init__(self, settings, limit: int = 256):
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

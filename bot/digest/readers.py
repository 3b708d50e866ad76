"""The languages a repository is read in, so that one LLM request writes a commit's analysis in
all of them (bot/analysis/texts.py): each digest built (a scheduled push, a `/digest`, the CLI)
and each subscription made notes its language for its repository, kept READ_DAYS days. A
language read for the first time after a commit was analysed costs a translation of the texts
(bot/analysis/translate.py), and is known from then on.
"""

from __future__ import annotations

import time

from ..i18n import LANGS

READ_DAYS = 30
NOTE_EVERY = 600.0  # seconds: a process notes a (repository, language) at most this often


class Readers:
    def __init__(self, store, clock=time.time):
        self.store = store
        self.clock = clock
        self._noted: dict[tuple[str, str], float] = {}

    def _key(self, cache_id: str) -> str:
        return self.store.k("readers", cache_id)

    async def note(self, cache_id: str, lang: str) -> None:
        """`cache_id` (a source's) is read in `lang` now."""
        if lang not in LANGS:
            return
        now = self.clock()
        if now - self._noted.get((cache_id, lang), float("-inf")) < NOTE_EVERY:
            return
        self._noted[(cache_id, lang)] = now
        key = self._key(cache_id)
        await self.store.hset_json(key, lang, int(now))
        await self.store.expire(key, READ_DAYS * 86400)

    async def languages(self, cache_id: str, first: str) -> tuple[str, ...]:
        """`first`, then the other languages the repository was read in within READ_DAYS."""
        read = await self.store.hgetall_json(self._key(cache_id))
        since = self.clock() - READ_DAYS * 86400
        others = [code for code in LANGS if code != first and isinstance(read.get(code), int) and read[code] >= since]
        return (first, *others)

"""The languages a repository is read in, so that one LLM request writes a commit's analysis in
all of them (bot/analysis/texts.py): each digest built (a scheduled push, a `/digest`, the CLI)
and each subscription made notes its language for its repository, kept READ_DAYS days. A
language read for the first time after a commit was analysed costs a translation of the texts
(bot/analysis/translate.py), and is known from then on; so does a digest's headline when the
same digest is kept in another language.
"""

from __future__ import annotations

import logging
import time

from ..core.models import BotError, analysis_from_dict, to_dict
from ..core.store import ANALYSIS_TTL
from ..i18n import LANGS

log = logging.getLogger(__name__)

READ_DAYS = 30
NOTE_EVERY = 600.0  # seconds: a process notes a (repository, language) at most this often
# Seconds a process keeps what it read of a repository's languages: a day's analyses ask for them
# commit after commit (a Redis round trip each), and they change when a language is first read.
LANGUAGES_FRESH = 2.0


class Readers:
    def __init__(self, store, clock=time.time):
        self.store = store
        self.clock = clock
        self._noted: dict[tuple[str, str], float] = {}
        self._read: dict[str, tuple[float, dict]] = {}  # cache_id → (read at, monotonic; the hash)

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
        """`first`, then the other languages the repository was read in within READ_DAYS: as
        Redis had them at most LANGUAGES_FRESH seconds ago (another process's new language may
        wait that long: its readers get a translation, not a wrong analysis), and what this
        process noted itself, at once — whenever the hash was read (a read that was under way
        while a language was noted cannot hide it)."""
        held = self._read.get(cache_id)
        if held is not None and time.monotonic() - held[0] < LANGUAGES_FRESH:
            read = held[1]
        else:
            read = await self.store.hgetall_json(self._key(cache_id))
            self._read[cache_id] = (time.monotonic(), read)
        since = self.clock() - READ_DAYS * 86400

        def when(code: str) -> float:
            there = read.get(code)
            return max(
                there if isinstance(there, int) else float("-inf"), self._noted.get((cache_id, code), float("-inf"))
            )

        return (first, *(code for code in LANGS if code != first and when(code) >= since))


async def translated_analysis(builder, source, commit, tag: str, lang: str) -> tuple[dict | None, bool]:
    """(the commit's analysis in `lang` made from the one already made in another language — its
    texts translated, level and type kept — and stored; whether there was one to translate).
    None when there is none, or its translation failed (the commit is then analysed in `lang`)."""
    store = builder.store
    for other in LANGS:
        if other == lang:
            continue
        held = await store.get_json(store.analysis_key(source.cache_id, commit.sha, tag, other))
        if not held:
            continue
        try:
            result = await builder.analyzer.translate(analysis_from_dict(held), commit, lang)
        except (BotError, ValueError) as exc:  # InvalidAnswer is a ValueError
            log.info("%s %s: no translation into %s (%s); analysing it", source.name, commit.short_sha, lang, exc)
            return None, True
        data = to_dict(result)
        await store.set_json(store.analysis_key(source.cache_id, commit.sha, tag, lang), data, ttl=ANALYSIS_TTL)
        return data, True
    return None, False


async def translated_headline(builder, source, twin: dict | None, label: str, lang: str) -> list[str] | None:
    """The headline of the same digest kept in another language (`twin`), made by the LLM,
    translated into `lang`; None when there is none or its translation failed (the headline is
    then made)."""
    if builder.llm is None or not twin or twin.get("headline_origin") != "llm" or not twin.get("headline"):
        return None
    try:
        return await builder.analyzer.translate_lines(twin["headline"], label, lang)
    except (BotError, ValueError) as exc:  # InvalidAnswer is a ValueError
        log.info("%s %s: the headline not translated into %s (%s)", source.name, label, lang, exc)
        return None

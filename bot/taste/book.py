"""Learned profiles per repository and day: kept, found, and learnt off every reader's path.

A commit is judged by the profile as of 00:00 UTC of its day: everything published before that
moment, nothing after — a digest for April is the same whether or not June exists — and a release
(or a reader's correction) counts from the next day on.

Learning (learn.py: read the history and the notes, label, fit) costs a second or two of CPU and
never runs on a request's path. The clock learns each subscribed repository's profile right after
midnight UTC (`learn_ahead`); a digest, a question or a range asking for a day whose profile is
not learnt yet is judged by the newest profile learnt as of an earlier day (or, for a repository
never learnt, by the rules alone), and that day's profile is learnt in the background meanwhile.
Each day's learning starts from the day before's (learn.State): it reads only what changed.

Kept in Redis (one copy for every process, compressed):
  taste2:{v}:{repo}:{day}        the profile: fingerprint, verdict, weights (judge.Judge reads them)
  taste2-state:{v}:{repo}:{day}  what its learning read (the next day's starts from it)
  taste2-days:{v}:{repo}         the days learnt (a sorted set: the newest one before a day)
Only the process that learns imports scikit-learn; readers judge with numpy (judge.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..core import reader_work
from ..core.models import BotError, Importance, Judgement
from .examples import Example, Verdict
from .learn import TASTE_VERSION, Learned, State, epoch, fingerprint, gather, learn, read_notes

if TYPE_CHECKING:
    from .judge import Judge

log = logging.getLogger(__name__)

__all__ = ["HISTORY_LIMIT", "TasteBook", "epoch", "fingerprint", "label_as_of", "read_notes"]

HISTORY_LIMIT = 2000  # commits read per profile: ~4 months of a busy repository
TASTE_TTL = 35 * 86400  # a day's profile: kept while that month's digests may be asked for again
STATE_TTL = 8 * 86400  # what its learning read: the next days' learning starts from it
LEARN_CLAIM = 600  # seconds one process holds a (repository, day) to learn it
FALLBACK_RECHECK = 30.0  # seconds before a day judged by an earlier profile looks for its own again
LEARN_GRACE = 0.5  # seconds before background learning looks whether a digest is being built
LEARN_WAIT_MAX = 300.0  # seconds background learning waits for the digests being built here (reader_work)


async def label_as_of(
    source, as_of: datetime, corrections: Mapping[str, Importance] | None = None, limit: int = HISTORY_LIMIT
) -> tuple[list[Example], Verdict]:
    """The repository's labelled examples from what was published before `as_of` (a full read)."""
    examples, verdict, _state = await gather(source, as_of, corrections, limit)
    return examples, verdict


@dataclass(frozen=True)
class Profile:
    """The profile a day is judged by: learnt as of `as_of` (that day, or an earlier one)."""

    fingerprint: str  # '' when there is none to judge by
    verdict: Verdict
    judge: Judge | None = None  # judge.Judge (numpy: imported when the first profile is read)
    as_of: datetime | None = None


_NONE = Profile("", Verdict("not_learnt"))


class TasteBook:
    """The learned profile a commit is judged by, per (repository, day), shared by every digest,
    question and process; a source that cannot list its history (no `history`) has none, and
    its digests use the rules alone. `store=None`: the report card's book, in memory, which
    learns the exact day it is asked for (an evaluation, not a reader, waits for it)."""

    def __init__(self, store, corrections=None, history_limit: int = HISTORY_LIMIT):
        self.store = store
        self.corrections = corrections  # bot.taste.corrections.Corrections, when the chat records them
        self.history_limit = history_limit
        self._told: set[str] = set()
        self._found: OrderedDict[tuple[str, str], tuple[float, Profile]] = OrderedDict()
        self._loaded: OrderedDict[str, Profile] = OrderedDict()  # Redis key → profile
        self._learning: dict[tuple[str, str], asyncio.Task] = {}
        # One look-up at a time per (repository, day): a digest's commits ask together, and a
        # profile loaded (or learnt, for the report card) once serves them all.
        self._resolving: dict[tuple[str, str], asyncio.Future] = {}

    # --- reading: never learns on the caller's path -------------------------------------------
    async def day(self, source, at: datetime) -> Profile:
        """The profile `at`'s day is judged by: its own when learnt, else the newest learnt as of
        an earlier day (its own is learnt meanwhile), else none."""
        if not hasattr(source, "history"):
            return _NONE
        as_of = epoch(at)
        ident = (source.cache_id, as_of.date().isoformat())
        found = self._found.get(ident)
        if found is not None and (found[1].as_of == as_of or time.monotonic() - found[0] < FALLBACK_RECHECK):
            self._found.move_to_end(ident)
            return found[1]
        pending = self._resolving.get(ident)
        if pending is None:
            lookup = self._learn_now(source, as_of) if self.store is None else self._lookup(source, as_of)
            pending = self._resolving[ident] = asyncio.ensure_future(lookup)
            try:
                profile = await asyncio.shield(pending)
            finally:
                self._resolving.pop(ident, None)
            self._found[ident] = (time.monotonic(), profile)
            while len(self._found) > 256:
                self._found.popitem(last=False)
        else:
            profile = await asyncio.shield(pending)
        if not profile.verdict.usable and source.cache_id not in self._told:
            self._told.add(source.cache_id)  # once a process: `python -m bot profile` says it in full
            log.info(
                "%s: no learned profile (%s); its levels come from the rules alone", source.name, profile.verdict.kind
            )
        return profile

    async def tag(self, source, at: datetime) -> str:
        """What the analysis cache key must say about the profile ('' without one)."""
        return (await self.day(source, at)).fingerprint

    async def judge(self, source, commit, files) -> Judgement | None:
        profile = await self.day(source, commit.committed_at)
        if profile.judge is None:
            return None
        paths = [f.path for f in files]
        added = [f.path for f in files if f.status == "added"]
        return profile.judge.judge(commit.title, paths, added)

    async def _lookup(self, source, as_of: datetime) -> Profile:
        own = await self._load(self._key(source, as_of))
        if own is not None:
            return own
        self.learn_soon(source, as_of)
        days = self.store.k("taste2-days", TASTE_VERSION, source.cache_id)
        for day, _ in await self.store.zlast(days, _ordinal(as_of) - 1, 3):
            earlier = await self._load(self._key(source, datetime.fromisoformat(day).replace(tzinfo=UTC)))
            if earlier is not None:
                return earlier
            await self.store.zrem(days, day)  # expired
        return _NONE

    async def _load(self, key: str) -> Profile | None:
        if key in self._loaded:
            self._loaded.move_to_end(key)
            return self._loaded[key]
        raw = await self.store.get_raw(key)
        if raw is None:
            return None
        profile = await asyncio.to_thread(_profile_of, raw, self.store)  # decompress, parse, build: off the loop
        self._loaded[key] = profile
        while len(self._loaded) > 16:
            self._loaded.popitem(last=False)
        return profile

    def _key(self, source, as_of: datetime) -> str:
        return self.store.k("taste2", TASTE_VERSION, source.cache_id, as_of.date().isoformat())

    # --- learning ---------------------------------------------------------------------------------
    def learn_soon(self, source, as_of: datetime) -> asyncio.Task | None:
        """Learn `as_of`'s profile in the background (once in this process at a time)."""
        if self.store is None or not hasattr(source, "history"):
            return None
        ident = (source.cache_id, as_of.date().isoformat())
        task = self._learning.get(ident)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._learn_quietly(source, as_of))
            self._learning[ident] = task
            task.add_done_callback(lambda _t: self._learning.pop(ident, None))
        return task

    async def learn_ahead(self, sources: Iterable, now: datetime) -> None:
        """The clock's part: today's profile of each repository, learnt in the background as soon
        as the day begins (00:00 UTC), so that the day's first digest finds it."""
        as_of = epoch(now)
        for source in sources:
            if self.store is None or not hasattr(source, "history"):
                continue
            if (source.cache_id, as_of.date().isoformat()) in self._learning:
                continue
            if await self.store.ttl(self._key(source, as_of)) is None:
                self.learn_soon(source, as_of)

    async def learn_days(self, source, start: datetime, end: datetime) -> list[Profile]:
        """Learn, one after the other, the profiles of every UTC day from `start`'s to the one
        holding `end` (what the clock does day by day; a bench or a test does it at once)."""
        day, last, learnt = epoch(start), epoch(end), []
        while day <= last:
            learnt.append(await self.learn(source, day))
            day = datetime.fromordinal(day.toordinal() + 1).replace(tzinfo=UTC)
        return learnt

    async def settle(self) -> None:
        """Wait for the learning under way (a one-shot CLI process, before it exits)."""
        pending = list(self._learning.values())
        if pending:
            await asyncio.wait(pending)

    async def aclose(self) -> None:
        for task in list(self._learning.values()):
            task.cancel()
        await asyncio.gather(*self._learning.values(), return_exceptions=True)

    async def _learn_quietly(self, source, as_of: datetime) -> None:
        try:
            # After the digests being built here. The reader that asked for this profile is
            # about to build one (a command counts what needs analysis before it builds): a
            # moment's grace lets it start, so that the learning waits for it too.
            await asyncio.sleep(LEARN_GRACE)
            await reader_work.quiet(LEARN_WAIT_MAX)
            await self.learn(source, as_of)
        except (BotError, ValueError) as exc:  # ValueError: scikit-learn found nothing to learn from
            log.warning("%s: learning the profile as of %s failed (%s)", source.name, as_of.date(), exc)
        except Exception:  # a bug must not end the process: the day is judged by an earlier profile
            log.exception("%s: learning the profile as of %s failed", source.name, as_of.date())

    async def learn(self, source, as_of: datetime) -> Profile:
        """Learn `as_of`'s profile now (from the newest earlier day's state when one is kept)
        and keep it; another process learning it meanwhile is left to it."""
        if self.store is None:
            return await self._learn_now(source, as_of)
        key = self._key(source, as_of)
        claim = key + ":learning"
        if not await self.store.claim(claim, LEARN_CLAIM):
            return await self._load(key) or _NONE
        try:
            if (kept := await self._load(key)) is not None:
                return kept
            corrections = await self._corrections_before(source, as_of)
            previous = await self._previous_state(source, as_of)
            learned, state = await learn(source, as_of, corrections, self.history_limit, previous)
            await self._keep(source, as_of, learned, state)
        finally:
            await self.store.delete(claim)
        for ident in [i for i in self._found if i[0] == source.cache_id]:
            del self._found[ident]  # days judged by an earlier profile look again
        return await self._load(key) or _NONE

    async def _keep(self, source, as_of: datetime, learned: Learned, state: State) -> None:
        profile_raw, state_raw = await asyncio.to_thread(
            lambda: (self.store.encode_blob(learned.to_json()), self.store.encode_blob(state.to_json()))
        )
        day = as_of.date().isoformat()
        await self.store.set_raw(
            self.store.k("taste2-state", TASTE_VERSION, source.cache_id, day), state_raw, STATE_TTL
        )
        await self.store.set_raw(self._key(source, as_of), profile_raw, TASTE_TTL)
        days = self.store.k("taste2-days", TASTE_VERSION, source.cache_id)
        await self.store.zadd(days, day, _ordinal(as_of))
        await self.store.expire(days, TASTE_TTL)

    async def _previous_state(self, source, as_of: datetime) -> State | None:
        days = self.store.k("taste2-days", TASTE_VERSION, source.cache_id)
        for day, _ in await self.store.zlast(days, _ordinal(as_of) - 1, 3):
            raw = await self.store.get_raw(self.store.k("taste2-state", TASTE_VERSION, source.cache_id, day))
            if raw is not None:
                return await asyncio.to_thread(_state_of, raw, self.store)
        return None

    async def _learn_now(self, source, as_of: datetime) -> Profile:
        """The report card's book: learnt here and now, kept in memory."""
        key = f"{source.cache_id}:{as_of.date().isoformat()}"
        if key not in self._loaded:
            learned, _ = await learn(source, as_of, {}, self.history_limit)
            self._loaded[key] = await asyncio.to_thread(_profile_from, learned.to_json())
        return self._loaded[key]

    async def _corrections_before(self, source, as_of: datetime) -> dict[str, Importance]:
        if self.corrections is None:
            return {}
        # The shared scope's only: one workspace's corrections (issue 35 §4) never move the levels
        # another workspace is shown through the profile.
        found = await self.corrections.effective(source.name)
        return {sha: Importance(c.level) for sha, c in found.items() if c.at < as_of}


def _state_of(raw: bytes, store) -> State:
    return State.from_json(store.decode_blob(raw))


def _profile_of(raw: bytes, store) -> Profile:
    return _profile_from(store.decode_blob(raw))


def _profile_from(data: dict) -> Profile:
    kind, n, above, share = data["verdict"]
    weights = data.get("weights")
    judge = None
    if weights:  # numpy comes in with the first profile that has something to judge with
        from .judge import Judge

        judge = Judge(weights)
    return Profile(
        data["fingerprint"],
        Verdict(kind, n, above, share),
        judge,
        datetime.fromisoformat(data["as_of"]).replace(tzinfo=UTC),
    )


def _ordinal(as_of: datetime) -> int:
    return as_of.date().toordinal()

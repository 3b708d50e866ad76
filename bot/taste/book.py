"""Learned profiles per repository and day: read the history, label it, learn, cache.

A commit is judged by the profile as of 00:00 UTC of its day: everything published before that
moment, nothing after — a digest for April is the same whether or not June exists — and a release
(or a reader's correction) counts from the next day on. One profile serves every digest, question
and process of that day: the labelled examples are cached in Redis per (repository, day), zlib-
compressed, and the fitted model is kept in memory (learning from cached examples takes
milliseconds). Learning runs in worker threads, never on the loop that acknowledges commands.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime

from ..core.models import Importance, Judgement, PastCommit
from .examples import Example, Verdict, label_history
from .model import LearnedProfile
from .notes import Category, ReleaseNotes, is_notes_file, label_category, parse_all

log = logging.getLogger(__name__)

HISTORY_LIMIT = 2000  # commits read per profile: ~4 months of a busy repository
MAX_NOTES_FILES = 40
TASTE_VERSION = "1"  # part of every cache key: bump when labelling or features change


def epoch(at: datetime) -> datetime:
    """00:00 UTC of `at`'s day: the profile's "as of"."""
    return at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


async def read_notes(source, ref: str) -> ReleaseNotes:
    """Every changelog file in the tree at `ref`, parsed and merged."""
    paths = [p for p in await source.list_paths(ref) if is_notes_file(p)][:MAX_NOTES_FILES]
    texts = [await source.read_file(p, ref) for p in paths]
    return await asyncio.to_thread(parse_all, [t for t in texts if t])


async def label_as_of(
    source, as_of: datetime, corrections: Mapping[str, Importance] | None = None, limit: int = HISTORY_LIMIT
) -> tuple[list[Example], Verdict]:
    """The repository's labelled examples from what was published before `as_of`: its changelog
    files as they stood then, the bodies of releases published before then and the labels of the
    PRs in its history (the last two where the source has them: GitHub)."""
    ref = await source.tip_before(as_of)
    if ref is None:
        return [], Verdict("no_notes")
    notes = await read_notes(source, ref)
    if release_bodies := getattr(source, "release_bodies", None):
        notes.merge(parse_all(await release_bodies(as_of)))
    history: list[PastCommit] = await source.history(ref, limit)
    labels: dict[int, Category] = {}
    if pr_labels := getattr(source, "pr_labels", None):
        numbers = [c.pr_number for c in history if c.pr_number is not None]
        for number, names in (await pr_labels(numbers)).items():
            if (category := label_category(names)) is not None:
                labels[number] = category
    return await asyncio.to_thread(label_history, history, notes, labels, corrections)


def fingerprint(examples: list[Example], verdict: Verdict) -> str:
    digest = hashlib.sha256(TASTE_VERSION.encode())
    digest.update(verdict.kind.encode())
    for e in examples:
        digest.update(f"{e.sha}:{e.level.value}:{e.heading}".encode())
    return digest.hexdigest()[:12]


class Profiles:
    """Fitted profiles in memory, least recently used first out."""

    def __init__(self, keep: int = 16):
        self._keep = keep
        self._fitted: OrderedDict[str, LearnedProfile] = OrderedDict()

    async def fitted(self, key: str, examples: list[Example]) -> LearnedProfile:
        profile = self._fitted.get(key)
        if profile is None:
            profile = await asyncio.to_thread(LearnedProfile, examples)
            self._fitted[key] = profile
            while len(self._fitted) > self._keep:
                self._fitted.popitem(last=False)
        self._fitted.move_to_end(key)
        return profile


TASTE_TTL = 35 * 86400  # a day's examples: kept while that month's digests may be asked for again


def _to_json(examples: list[Example], verdict: Verdict) -> dict:
    return {
        "verdict": [verdict.kind, verdict.examples, verdict.above_low, verdict.listed_share],
        "examples": [
            [e.sha, e.title, list(e.paths), list(e.added), e.level.value, e.heading, e.category, e.source]
            for e in examples
        ],
    }


def _from_json(data: dict) -> tuple[list[Example], Verdict]:
    kind, n, above, share = data["verdict"]
    examples = [
        Example(sha, title, tuple(paths), tuple(added), Importance(level), heading, category, origin)
        for sha, title, paths, added, level, heading, category, origin in data["examples"]
    ]
    return examples, Verdict(kind, n, above, share)


class TasteBook:
    """The learned profile a commit is judged by: per (repository, day), shared by every digest,
    question and process (Redis single flight); a source that cannot list its history (no
    `history`) has none, and its digests use the rules alone."""

    def __init__(self, store, corrections=None, history_limit: int = HISTORY_LIMIT):
        self.store = store  # None: in memory only (the report card)
        self.corrections = corrections  # bot.taste.corrections.Corrections, when the chat records them
        self.history_limit = history_limit
        self._profiles = Profiles()
        self._told: set[str] = set()
        self._days: OrderedDict[str, tuple[str, Verdict, list[Example]]] = OrderedDict()

    async def day(self, source, at: datetime) -> tuple[str, Verdict, list[Example]]:
        """(fingerprint, verdict, examples) of the profile `at` is judged by; fingerprint '' when
        the repository's notes teach nothing."""
        if not hasattr(source, "history"):
            return "", Verdict("no_notes"), []
        as_of = epoch(at)
        parts = ("taste", TASTE_VERSION, source.cache_id, as_of.date().isoformat())
        key = self.store.k(*parts) if self.store is not None else ":".join(parts)
        if key in self._days:
            self._days.move_to_end(key)
            return self._days[key]

        async def produce():
            corrections = await self._corrections_before(source, as_of)
            examples, verdict = await label_as_of(source, as_of, corrections, self.history_limit)
            data = _to_json(examples, verdict)
            await self.store.set_blob(key, data, ttl=TASTE_TTL)
            return data

        if self.store is None:  # the report card's in-memory book
            data = _to_json(*await label_as_of(source, as_of, {}, self.history_limit))
        else:
            data = await self.store.single_flight(key, produce, cached=lambda: self.store.get_blob(key))
        examples, verdict = await asyncio.to_thread(_from_json, data)
        found = (fingerprint(examples, verdict) if verdict.usable else "", verdict, examples)
        if not verdict.usable and source.cache_id not in self._told:
            self._told.add(source.cache_id)  # once a process: `python -m bot profile` says it in full
            log.info("%s: no learned profile (%s); its levels come from the rules alone", source.name, verdict.kind)
        self._days[key] = found
        while len(self._days) > 32:
            self._days.popitem(last=False)
        return found

    async def tag(self, source, at: datetime) -> str:
        """What the analysis cache key must say about the profile ('' without one)."""
        found, _, _ = await self.day(source, at)
        return found

    async def judge(self, source, commit, files) -> Judgement | None:
        found, _verdict, examples = await self.day(source, commit.committed_at)
        if not found:
            return None
        profile = await self._profiles.fitted(found, examples)
        paths = [f.path for f in files]
        added = [f.path for f in files if f.status == "added"]
        return profile.judge(commit.title, paths, added)

    async def _corrections_before(self, source, as_of: datetime) -> dict[str, Importance]:
        if self.corrections is None:
            return {}
        found = await self.corrections.effective(source.name)
        return {sha: Importance(c.level) for sha, c in found.items() if c.at < as_of}

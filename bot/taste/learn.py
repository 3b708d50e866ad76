"""Learning one profile as of a day, from scratch or from the day before's.

A profile as of day D is the history before D (the branch's last 2,000 commits), labelled by the
release notes as they stood then, fitted (model.py). Most of that is what day D−1 already read:
`learn` takes the previous profile's `State` — the history it read and the notes it parsed — and
reads only the commits the branch gained since and, when a notes file changed (its blob id), the
notes again. The labels are worked out again in full (a release moves every older commit's
label, and labelling 2,000 commits costs milliseconds) and the model is fitted afresh, so the
profile is the same, bit for bit, as a full learn of day D (tests/test_taste.py).

Sources without `history_shas` (GitHub: no file lists, 100 commits a request) read it all each day.
Every CPU-bound step runs in a worker thread; only the reads wait on the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..core.models import Importance, PastCommit
from .examples import Example, Verdict, label_history
from .notes import Category, Entry, ReleaseNotes, is_notes_file, label_category, parse_all

TASTE_VERSION = "1"  # part of every cache key: bump when labelling or features change
MAX_NOTES_FILES = 40


def epoch(at: datetime) -> datetime:
    """00:00 UTC of `at`'s day: the profile's "as of"."""
    return at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass
class State:
    """What a learn read, for the next day's: the tip it read from, the history, the notes."""

    ref: str = ""
    limit: int = 0  # the most commits its history held
    history: list[PastCommit] = field(default_factory=list)
    notes_key: str = ""  # the notes files' paths and blob ids ('' where the source cannot say)
    notes: ReleaseNotes | None = None  # parsed from those files (releases' bodies not included)

    def to_json(self) -> dict:
        notes = self.notes or ReleaseNotes({})
        return {
            "ref": self.ref,
            "limit": self.limit,
            "history": [
                [c.sha, int(c.committed_at.timestamp()), c.title, c.pr_number, list(c.paths), list(c.added)]
                for c in self.history
            ],
            "notes_key": self.notes_key,
            "notes": {
                "entries": [[n, e.category.value, e.heading, e.released] for n, e in notes.entries.items()],
                "generated": notes.generated_lines,
                "lines": notes.lines,
            },
        }

    @classmethod
    def from_json(cls, data: dict) -> State:
        history = [
            PastCommit(sha, datetime.fromtimestamp(ts, tz=UTC), title, pr, tuple(paths), tuple(added))
            for sha, ts, title, pr, paths, added in data["history"]
        ]
        raw = data["notes"]
        entries = {n: Entry(n, Category(cat), heading, released) for n, cat, heading, released in raw["entries"]}
        notes = ReleaseNotes(entries, raw["generated"], raw["lines"])
        return cls(data["ref"], data["limit"], history, data["notes_key"], notes)


@dataclass
class Learned:
    """A profile as kept: its fingerprint (part of the analyses' cache keys), the verdict, the
    labelled examples and, when usable, the fitted weights (judge.Judge reads them)."""

    as_of: datetime
    fingerprint: str  # '' when the notes teach nothing
    verdict: Verdict
    examples: list[Example]
    weights: dict | None

    def to_json(self) -> dict:
        v = self.verdict
        return {
            "as_of": self.as_of.date().isoformat(),
            "fingerprint": self.fingerprint,
            "verdict": [v.kind, v.examples, v.above_low, v.listed_share],
            "weights": self.weights,
        }


def fingerprint(examples: list[Example], verdict: Verdict) -> str:
    digest = hashlib.sha256(TASTE_VERSION.encode())
    digest.update(verdict.kind.encode())
    for e in examples:
        digest.update(f"{e.sha}:{e.level.value}:{e.heading}".encode())
    return digest.hexdigest()[:12]


async def read_notes(source, ref: str) -> ReleaseNotes:
    """Every changelog file in the tree at `ref`, parsed and merged."""
    paths = [p for p in await source.list_paths(ref) if is_notes_file(p)][:MAX_NOTES_FILES]
    texts = [await source.read_file(p, ref) for p in paths]
    return await asyncio.to_thread(parse_all, [t for t in texts if t])


async def _notes(source, ref: str, previous: State | None) -> tuple[str, ReleaseNotes]:
    """(notes key, the notes files parsed): the day before's when no notes file changed."""
    path_ids = getattr(source, "path_ids", None)
    if path_ids is None:
        return "", await read_notes(source, ref)
    ids = await path_ids(ref)
    paths = [p for p in ids if is_notes_file(p)][:MAX_NOTES_FILES]
    key = hashlib.sha256("\n".join(f"{p} {ids[p]}" for p in paths).encode()).hexdigest()
    if previous is not None and previous.notes is not None and previous.notes_key == key:
        return key, previous.notes
    texts = [await source.read_file(p, ref) for p in paths]
    return key, await asyncio.to_thread(parse_all, [t for t in texts if t])


async def _history(source, ref: str, limit: int, previous: State | None) -> list[PastCommit]:
    shas_of = getattr(source, "history_shas", None)
    if previous is None or shas_of is None or not previous.history:
        return await source.history(ref, limit)
    if previous.ref == ref and previous.limit == limit:
        return previous.history
    shas = await shas_of(ref, limit)
    known = {c.sha: c for c in previous.history}
    fresh = await source.history_of([s for s in shas if s not in known])
    known.update((c.sha, c) for c in fresh)
    return [known[s] for s in shas if s in known]


def _copy(notes: ReleaseNotes) -> ReleaseNotes:
    return ReleaseNotes(dict(notes.entries), notes.generated_lines, notes.lines)


async def gather(
    source, as_of: datetime, corrections: Mapping[str, Importance] | None, limit: int, previous: State | None = None
) -> tuple[list[Example], Verdict, State]:
    """The repository's labelled examples from what was published before `as_of` (its changelog
    files as they stood then, the bodies of releases published before then and the labels of
    the PRs in its history — the last two where the source has them: GitHub), and what was read."""
    ref = await source.tip_before(as_of)
    if ref is None:
        return [], Verdict("no_notes"), State()
    key, files_notes = await _notes(source, ref, previous)
    notes = _copy(files_notes)
    if release_bodies := getattr(source, "release_bodies", None):
        notes.merge(await asyncio.to_thread(parse_all, await release_bodies(as_of)))
    history = await _history(source, ref, limit, previous)
    labels: dict[int, Category] = {}
    if pr_labels := getattr(source, "pr_labels", None):
        numbers = [c.pr_number for c in history if c.pr_number is not None]
        for number, names in (await pr_labels(numbers)).items():
            if (category := label_category(names)) is not None:
                labels[number] = category
    examples, verdict = await asyncio.to_thread(label_history, history, notes, labels, corrections)
    return examples, verdict, State(ref, limit, history, key, files_notes)


def fit(as_of: datetime, examples: list[Example], verdict: Verdict) -> Learned:
    """The profile from labelled examples (CPU: call it in a worker thread). scikit-learn is
    imported here, by the process that learns, and only when there is something to learn."""
    if not verdict.usable:
        return Learned(as_of, "", verdict, examples, None)
    from .model import LearnedProfile

    return Learned(as_of, fingerprint(examples, verdict), verdict, examples, LearnedProfile(examples).weights())


async def learn(
    source,
    as_of: datetime,
    corrections: Mapping[str, Importance] | None = None,
    limit: int = 2000,
    previous: State | None = None,
) -> tuple[Learned, State]:
    """The profile as of `as_of`, from the day before's `previous` state when there is one."""
    examples, verdict, state = await gather(source, as_of, corrections, limit, previous)
    return await asyncio.to_thread(fit, as_of, examples, verdict), state

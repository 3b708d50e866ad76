"""A repository's history as of one moment → labelled examples of what its maintainers announce.

A commit is labelled by what was published before that moment only (no peeking):
- its PR is listed in the release notes: the heading's category (Bug fixes → medium, Breaking
  changes → high, Documentation → low);
- it added a changelog fragment (`changelog.d/123.bugfix.md`): the fragment's type;
- a PR label said so (GitHub sources), or a reader in a channel corrected its level (the latest
  correction wins over everything: it is the channel's own judgement);
- it was released without being listed: low. "Released" means older than the newest commit listed
  under a version's heading; newer unlisted commits may still be listed in the next release, so
  they are left out rather than guessed.

The verdict says when the notes cannot teach anything: none found, too few examples, or notes that
list every pull request (GitHub's automatic "What's Changed"), where being listed means nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.models import Importance, PastCommit
from .notes import Category, ReleaseNotes, fragment_category, fragment_heading

MIN_EXAMPLES = 40  # fewer labelled commits than this teach nothing reliable
MIN_CLASS = 8  # nor do fewer than this on either side of low / above low
EVERYTHING = 0.9  # notes that list this share of released PRs, nearly all above low, list everything


@dataclass(frozen=True)
class Example:
    sha: str
    title: str
    paths: tuple[str, ...]
    added: tuple[str, ...]
    level: Importance
    heading: str  # the maintainers' heading ("" when unlisted)
    category: str  # a Category value, or "unlisted"
    source: str  # "notes", "fragment", "label", "correction", "unlisted"


@dataclass(frozen=True)
class Verdict:
    kind: str  # "ok", "no_notes", "lists_everything", "too_few"
    examples: int = 0
    above_low: int = 0
    listed_share: float = 0.0  # of the released PRs, how many the notes list

    @property
    def usable(self) -> bool:
        return self.kind == "ok"


def label_history(
    history: Sequence[PastCommit],
    notes: ReleaseNotes,
    labels: Mapping[int, Category] | None = None,
    corrections: Mapping[str, Importance] | None = None,
) -> tuple[list[Example], Verdict]:
    """`history` newest first; `labels`: PR number → what its labels say; `corrections`: sha → level."""
    labels = labels or {}
    corrections = corrections or {}
    boundary = _release_boundary(history, notes)
    oldest_listed = _oldest_listed(history, notes)
    uses_fragments = any(fragment_category(p) for c in history for p in c.added)
    examples: list[Example] = []
    released_prs = listed_prs = 0
    for i, commit in enumerate(history):
        released = boundary is not None and i >= boundary and (oldest_listed is None or i <= oldest_listed)
        if commit.pr_number is not None and released:
            released_prs += 1
            listed_prs += commit.pr_number in notes.entries
        example = _label(commit, notes, labels, corrections, released or uses_fragments)
        if example is not None:
            examples.append(example)
    above = sum(e.level is not Importance.LOW for e in examples)
    share = listed_prs / released_prs if released_prs else 0.0
    if not notes.entries and not uses_fragments and not labels and not corrections:
        return [], Verdict("no_notes")
    low_listed = sum(e.level is Importance.LOW and e.source == "notes" for e in examples)
    if (share >= EVERYTHING or notes.looks_generated) and released_prs and low_listed < 0.1 * max(1, above):
        return [], Verdict("lists_everything", len(examples), above, share)
    if len(examples) < MIN_EXAMPLES or min(above, len(examples) - above) < MIN_CLASS:
        return examples, Verdict("too_few", len(examples), above, share)
    return examples, Verdict("ok", len(examples), above, share)


def _label(
    commit: PastCommit,
    notes: ReleaseNotes,
    labels: Mapping[int, Category],
    corrections: Mapping[str, Importance],
    unlisted_is_low: bool,
) -> Example | None:
    def example(level: Importance, heading: str, category: str, source: str) -> Example:
        return Example(commit.sha, commit.title, commit.paths, commit.added, level, heading, category, source)

    if commit.sha in corrections:
        return example(corrections[commit.sha], "", "correction", "correction")
    fragments = [(fragment_category(p), fragment_heading(p)) for p in commit.added]
    found = [(cat, heading) for cat, heading in fragments if cat is not None]
    if found:
        cat, heading = min(found, key=lambda f: f[0].level.rank)
        return example(cat.level, heading, cat.value, "fragment")
    entry = notes.entries.get(commit.pr_number) if commit.pr_number is not None else None
    if entry is not None:
        return example(entry.category.level, entry.heading, entry.category.value, "notes")
    label = labels.get(commit.pr_number) if commit.pr_number is not None else None
    if label is not None:  # no heading: a label is not a listing in the notes (the reason says "announced")
        return example(label.level, "", label.value, "label")
    if unlisted_is_low:
        return example(Importance.LOW, "", "unlisted", "unlisted")
    return None


def _release_boundary(history: Sequence[PastCommit], notes: ReleaseNotes) -> int | None:
    """Index (newest first) of the newest commit listed under a released version: it and every
    older commit were out when those notes were written."""
    for i, commit in enumerate(history):
        entry = notes.entries.get(commit.pr_number) if commit.pr_number is not None else None
        if entry is not None and entry.released:
            return i
    return None


def _oldest_listed(history: Sequence[PastCommit], notes: ReleaseNotes) -> int | None:
    """Index of the oldest commit the notes list: older ones may predate the notes themselves."""
    for i in range(len(history) - 1, -1, -1):
        number = history[i].pr_number
        if number is not None and number in notes.entries:
            return i
    return None

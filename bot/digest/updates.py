"""What a dependency bot's commit updates, as the lines its bot group shows (`name old → new`):
the offline analyser's dependency facts — Renovate's table, Dependabot's line, the title,
lockfile and version-pin diffs — read once when the digest is built (bot/digest/noise.py, which
groups the commits, stays pure)."""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.offline.evidence.dependencies import dependency_updates
from ..analysis.offline.stats import file_stats
from ..analysis.offline.title import parse_title
from ..core.models import Commit, FileChange


def update_lines(commit: Commit, files: Sequence[FileChange]) -> tuple[str, ...]:
    """What a bot's commit updates, as `name old → new`."""
    found = dependency_updates(commit, file_stats(commit, files), parse_title(commit.title, commit.body))
    return tuple(f"{name} {old} → {new}" if old else f"{name} → {new}" for name, old, new in found)

"""A digest of several branches (bot/sources/branches.py): each entry told the followed branches
its commit is on and its backports, from the listing; and the same read back from a digest kept
in another language (its twin), so a translation names the same branches."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.models import DigestEntry, to_dict
from ..sources.branches import Followed


def on_branches(entry: DigestEntry, followed: Followed) -> DigestEntry:
    sha = entry.commit.sha
    return replace(
        entry,
        branches=followed.on.get(sha, ()),
        backport_of=followed.backport_of.get(sha, ""),
        backports=followed.backports.get(sha, ()),
    )


def twin_followed(twin: dict[str, Any]) -> Followed | None:
    """The branch marks of a digest kept in another language (None: it followed one branch)."""
    entries = twin.get("entries") or ()
    if not any(e.get("branches") for e in entries):
        return None
    return Followed(
        [],
        on={e["commit"]["sha"]: tuple(e.get("branches") or ()) for e in entries},
        backport_of={e["commit"]["sha"]: e["backport_of"] for e in entries if e.get("backport_of")},
        backports={e["commit"]["sha"]: tuple(e["backports"]) for e in entries if e.get("backports")},
    )


def one_branch_dict(entry: DigestEntry) -> dict[str, Any]:
    """An entry as a cache key reads it: the branch marks only when it has them, so a digest of one
    branch keeps the keys it had before several branches existed."""
    data = to_dict(entry)
    for key in ("branches", "backport_of", "backports"):
        if not data.get(key):
            data.pop(key, None)
    return data

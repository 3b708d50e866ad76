"""GitLab's JSON answers turned into our models, in the worker thread: pure functions of what
GitLab answered (no request is made here), read by source.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ...core.file_kinds import is_binary_path
from ...core.models import Commit, FileChange
from ..message import email_user, split_message, strip_emails

# GitLab's merge commit (and a squash commit whose template says so) names its merge request:
# "See merge request group/project!123".
_MERGE_REQUEST = re.compile(r"See merge request (?:[\w.\-/]+)?!(\d+)")
# GitLab's default issue-closing pattern, simplified: a keyword, then #N or an issue URL. Only an
# MR whose description matches is asked for its closed issues (one request each).
CLOSING = re.compile(
    r"\b(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|implement(?:s|ed|ing)?):? +"
    r"(?:issues? +)?(?:[\w.\-/]*#\d+|https?://\S+/-/(?:issues|work_items)/\d+)",
    re.IGNORECASE,
)


def when(value: Any) -> datetime:
    """GitLab's ISO 8601 times (`2026-01-28T03:00:00.000+08:00`, `…Z`) in UTC."""
    text = str(value or "").replace("Z", "+00:00")
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def merge_request_named(message: str) -> int | None:
    found = _MERGE_REQUEST.search(message or "")
    return int(found.group(1)) if found else None


def to_commit(project: str, c: dict, pr_number: int | None = None, detailed: bool = False) -> Commit:
    title, body, named_pr, reverts = split_message(str(c.get("message") or c.get("title") or ""))
    extra: dict[str, Any] = {}
    if detailed and isinstance(c.get("stats"), dict):  # GET …/commits/:sha carries its line counts
        extra = {"additions": int(c["stats"].get("additions") or 0), "deletions": int(c["stats"].get("deletions") or 0)}
    # A GitHub-style "(#12)" in a title names an issue on GitLab, not a merge request: only
    # GitLab's own "See merge request …!N" (or the MR found for the commit) gives the number.
    del named_pr
    return Commit(
        repo=project,
        sha=str(c["id"]),
        title=title,
        body=body,
        author=strip_emails(str(c.get("author_name") or "")) or "unknown",
        committed_at=when(c.get("committed_date") or c.get("created_at")),
        url=c.get("web_url"),
        parents=tuple(str(p) for p in c.get("parent_ids") or ()),
        pr_number=pr_number or merge_request_named(str(c.get("message") or "")),
        reverts=reverts,
        login=email_user(c.get("author_email")),
        **extra,
    )


_HUNK_LINE = re.compile(r"^([+-])", re.MULTILINE)


def to_file(d: dict) -> FileChange:
    """One entry of GET …/commits/:sha/diff. GitLab cuts a diff it finds too large: `too_large`
    (or, folded in its page, `collapsed`) with an empty `diff`; older servers send only the empty
    `diff` — a modified file with no hunk and no change of mode is such a cut. Its lines are then
    unknown: no patch, as GitHub's truncated files have none, and the coverage line says so."""
    path = str(d.get("new_path") or d.get("old_path") or "")
    old = str(d.get("old_path") or "")
    diff = d.get("diff")
    text = diff if isinstance(diff, str) else ""
    if d.get("new_file"):
        status = "added"
    elif d.get("deleted_file"):
        status = "removed"
    elif d.get("renamed_file"):
        status = "renamed"
    else:
        status = "modified"
    binary = is_binary_path(path) or text.startswith("Binary files ")
    cut = bool(d.get("too_large") or d.get("collapsed")) or (
        not text and status == "modified" and d.get("a_mode") == d.get("b_mode")
    )
    patch: str | None = None if binary or cut else text
    additions = deletions = 0
    if patch:
        for mark in _HUNK_LINE.findall(patch):
            if mark == "+":
                additions += 1
            else:
                deletions += 1
    return FileChange(
        path=path,
        status=status,
        additions=additions,
        deletions=deletions,
        patch=patch,
        previous_path=old if status == "renamed" and old != path else None,
        binary=binary,
    )


def labels_of(mr: dict) -> list[str]:
    """An MR's label names (GitLab sends names; `with_labels_details` would send objects)."""
    found = []
    for label in mr.get("labels") or ():
        name = label.get("name") if isinstance(label, dict) else label
        if isinstance(name, str) and name:
            found.append(name)
    return found


def landed_as(mr: dict) -> tuple[str, ...]:
    """The commits a merged MR put on its target branch: its merge commit, its squash commit,
    and its head (a fast-forward merge lands the head itself)."""
    return tuple(str(s) for s in (mr.get("merge_commit_sha"), mr.get("squash_commit_sha"), mr.get("sha")) if s)

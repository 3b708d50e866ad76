"""PyGithub's objects and GitHub's GraphQL answers turned into our models, in the worker thread.

Pure functions of what GitHub answered (no request is made here: only fields a list response
carries are read), read by source.py; the objects are typed `Any` so that
PyGithub stays imported in client.py alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from typing import Any

from ...core.file_kinds import is_binary_path
from ...core.models import Commit, FileChange, RateLimited, SourceError, UsageError
from ...i18n import phrase
from ..message import email_user, pr_context, release_text, split_message, strip_emails

__all__ = ["pr_context", "release_text"]  # shared with GitLab (message.py); read here by source.py

_STATUSES = {"added", "removed", "modified", "renamed", "copied"}  # "changed"/"unchanged" → modified


def to_commit(repo: str, c: Any, detailed: bool = False) -> Commit:
    """Only fields present in a list response are read: `c.sha` (not `c.commit.sha`, which costs a
    request), the git author/committer/message, parents and html_url."""
    git = c.commit
    title, body, pr_number, reverts = split_message(git.message)
    extra: dict[str, Any] = {}
    if detailed:  # a single-commit response also carries stats and the first page of files
        stats = c.stats
        files = c.raw_data.get("files") or []
        paginated = 'rel="next"' in str(c.raw_headers.get("link", ""))
        extra = {
            "additions": stats.additions,
            "deletions": stats.deletions,
            "files_changed": None if paginated else len(files),
        }
    return Commit(
        repo=repo,
        sha=c.sha,
        title=title,
        body=body,
        author=_display_name(git.author.name),
        committed_at=git.committer.date.astimezone(UTC),
        url=c.html_url,
        parents=tuple(p.sha for p in c.parents),
        pr_number=pr_number,
        reverts=reverts,
        login=_login(c.author, git.author.email),
        **extra,
    )


@dataclass(frozen=True)
class PullFacts:
    """What the learned profile reads of one pull request: its labels, and its files as a past
    commit's paths (a rename is its new path; the files it adds)."""

    labels: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    added: tuple[str, ...] = ()


def graphql_pull_facts(data: dict, repo: str) -> dict[int, PullFacts] | None:
    """`{number: PullFacts}` from a batch's answer; None when the repository itself is not there.
    Unknown numbers (NOT_FOUND) are skipped; any other error fails the batch (rate limited …)."""
    errors = [e for e in data.get("errors") or [] if isinstance(e, dict)]
    repository = (data.get("data") or {}).get("repository")
    if not isinstance(repository, dict):
        if any(e.get("type") == "RATE_LIMITED" for e in errors):
            raise RateLimited(phrase("errors.github_rate_limited"))
        if not errors or all(e.get("type") == "NOT_FOUND" for e in errors):
            return None
        message = str(errors[0].get("message") or errors[0].get("type") or "-")
        raise SourceError(phrase("errors.github_http", status=200, repo=repo, message=message))
    found: dict[int, PullFacts] = {}
    for alias, node in repository.items():
        if isinstance(node, dict) and alias.startswith("pr") and alias[2:].isdigit():
            names = [n.get("name") for n in ((node.get("labels") or {}).get("nodes") or []) if isinstance(n, dict)]
            files = [f for f in ((node.get("files") or {}).get("nodes") or []) if isinstance(f, dict)]
            files = sorted((f for f in files if isinstance(f.get("path"), str) and f["path"]), key=lambda f: f["path"])
            found[int(alias[2:])] = PullFacts(
                labels=tuple(n for n in names if isinstance(n, str) and n),
                paths=tuple(f["path"] for f in files),
                added=tuple(f["path"] for f in files if f.get("changeType") == "ADDED"),
            )
    return found


def require_ref(ref: str) -> str:
    # An empty ref would turn GET /commits/{ref} into the listing endpoint.
    ref = (ref or "").strip()
    if not ref:
        raise UsageError(phrase("errors.no_sha"))
    return ref


def _login(account: Any, email: str | None) -> str:
    """The GitHub account's login (the list response carries it: no request; `raw_data` would
    make one), else the e-mail's user part."""
    login = getattr(account, "login", None) if account is not None else None
    return str(login) if login else email_user(email)


def _display_name(name: str | None) -> str:
    return strip_emails(name or "") or "unknown"


def to_file(f: Any) -> FileChange:
    patch = f.patch
    additions, deletions = f.additions or 0, f.deletions or 0
    status = f.status if f.status in _STATUSES else "modified"
    # GitHub sends no patch for huge diffs (with counts), and none, counting no lines, for a
    # binary file — and for an empty file, a change of mode or a bare rename, which a clone shows
    # as text without a hunk: only a path of a binary kind tells the two apart.
    binary = is_binary_path(f.filename)
    if patch is None and additions == 0 and deletions == 0 and not binary:
        patch = ""  # an empty file added or removed, a mode or a name changed: as `git diff` shows it
    return FileChange(
        path=f.filename,
        status=status,
        additions=additions,
        deletions=deletions,
        patch=None if binary else patch,
        previous_path=f.previous_filename or None,
        binary=binary,
    )

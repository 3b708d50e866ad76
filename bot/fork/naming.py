"""How a fork is named: `PATH@BRANCH` (a local git repository) or `REPO@BRANCH` where REPO is any
name the source registry takes whose host git can fetch (`owner/name` on GitHub,
`gitlab:group/project` on GitLab; bot/sources/registry.py), read through a mirror under DATA_DIR.
The branch may be left out: the fork's default branch. An existing path always wins, as for `--repo`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from settings import Settings

from ..core.models import NotFoundError, UsageError
from ..i18n import phrase
from ..sources.giturl import without_credentials
from ..sources.registry import find


class ForkError(UsageError):
    """Bad fork input: one sentence; the CLI and the chat add their own usage line."""


class ForkNotFound(NotFoundError):
    """The fork, or its branch, is not there."""


@dataclass(frozen=True)
class ForkSpec:
    raw: str
    kind: str  # "path", or the registry's kind of a host git fetches from ("github", "gitlab" …)
    where: str  # absolute path, or the repository's name as its registry entry spells it (`gitlab:g/p`)
    branch: str | None  # None: the fork's default branch

    @property
    def name(self) -> str:
        """How the digest names the fork: its repository's name, or the local folder's name."""
        if self.kind != "path":
            return self.where
        base = os.path.basename(self.where.rstrip("/"))
        return base[:-4] if base.endswith(".git") else base

    @property
    def display(self) -> str:
        return f"{self.name}@{self.branch}" if self.branch else self.name


def _valid_branch(branch: str) -> bool:
    if not branch or branch.startswith("-") or len(branch) > 255:
        return False
    proc = subprocess.run(["git", "check-ref-format", "--branch", branch], capture_output=True)
    return proc.returncode == 0


def parse_fork(raw: str, lang: str, settings: Settings | None = None) -> ForkSpec:
    """A ForkSpec, or ForkError with one sentence saying what is wrong."""
    value = without_credentials((raw or "").strip())  # a git URL's credentials are never kept
    if not value:
        raise ForkError(phrase("downstream.empty"))
    expanded = os.path.expanduser(value)
    if os.path.exists(expanded):
        return ForkSpec(value, "path", os.path.abspath(expanded), None)
    where, at, branch = value.rpartition("@")
    if not at:
        where, branch = value, ""
    elif not branch:
        raise ForkError(phrase("downstream.no_branch_after_at", fork=value))
    if branch and not _valid_branch(branch):
        raise ForkError(phrase("downstream.bad_branch", branch=branch))
    path = os.path.expanduser(where)
    if os.path.exists(path):
        return ForkSpec(value, "path", os.path.abspath(path), branch or None)
    named = find(where, settings)
    if named is not None and named.entry.remote and named.entry.clone_url is not None:
        return ForkSpec(value, named.kind, named.spec, branch or None)
    if os.sep in where or where.startswith((".", "~")):
        raise ForkNotFound(phrase("downstream.no_such_path", path=where))
    raise ForkError(phrase("downstream.bad_spec", fork=value))

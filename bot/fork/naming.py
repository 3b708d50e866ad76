"""How a fork is named: `PATH@BRANCH` (a local git repository) or `OWNER/NAME@BRANCH` (a GitHub
repository, read through a mirror under DATA_DIR). The branch may be left out: the fork's default
branch. An existing path always wins over owner/name, as for `--repo`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from ..core.models import NotFoundError, UsageError
from ..i18n import phrase
from ..sources import GITHUB_NAME


class ForkError(UsageError):
    """Bad fork input: one sentence; the CLI and the chat add their own usage line."""


class ForkNotFound(NotFoundError):
    """The fork, or its branch, is not there."""


@dataclass(frozen=True)
class ForkSpec:
    raw: str
    kind: str  # "path" | "github"
    where: str  # absolute path, or owner/name
    branch: str | None  # None: the fork's default branch

    @property
    def name(self) -> str:
        """How the digest names the fork: owner/name, or the local folder's name."""
        if self.kind == "github":
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


def parse_fork(raw: str, lang: str) -> ForkSpec:
    """A ForkSpec, or ForkError with one sentence saying what is wrong."""
    value = (raw or "").strip()
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
    if GITHUB_NAME.match(where) and not where.startswith((".", "/", "~")):
        return ForkSpec(value, "github", where, branch or None)
    if os.sep in where or where.startswith((".", "~")):
        raise ForkNotFound(phrase("downstream.no_such_path", path=where))
    raise ForkError(phrase("downstream.bad_spec", fork=value))

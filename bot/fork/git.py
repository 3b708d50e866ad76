"""git plumbing over an *object view*: one repository's refs, objects from several stores, and a
scratch object directory that receives everything git writes.

Downstream checks combine two repositories (the upstream and the fork) that may live in different
places — a user's checkout, a mirror under DATA_DIR. Instead of fetching one into the other, git
reads both stores at once through `GIT_ALTERNATE_OBJECT_DIRECTORIES`, and every object our checks
create (synthetic commits, merge results) goes to `GIT_OBJECT_DIRECTORY`, a temporary folder
deleted afterwards. No working tree, no index, no ref and no object store of the user's is ever
written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from ..core.models import SourceError
from ..i18n import phrase
from ..sources.mirror import base_env

# A fixed identity and date for synthetic commits: the same inputs give the same objects.
SYNTHETIC_IDENTITY = {
    "GIT_AUTHOR_NAME": "digest-bot",
    "GIT_AUTHOR_EMAIL": "digest-bot@localhost",
    "GIT_COMMITTER_NAME": "digest-bot",
    "GIT_COMMITTER_EMAIL": "digest-bot@localhost",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class GitFailed(SourceError):
    """A git command failed; `stderr` keeps git's words for the caller to classify."""

    def __init__(self, message: str, stderr: str = "", code: int = 1):
        super().__init__(message)
        self.stderr = stderr
        self.code = code


@lru_cache(maxsize=1)
def git_version() -> tuple[int, int]:
    """(major, minor) of the `git` on PATH: picks the cherry-pick check a version supports."""
    out = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    match = re.search(r"(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def objects_dir(git_dir: str | Path) -> str:
    """The object store of a repository given its git directory."""
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", "--git-path", "objects"],
        capture_output=True,
        text=True,
        env=base_env(),
    )
    path = proc.stdout.strip() if proc.returncode == 0 else os.path.join(str(git_dir), "objects")
    return os.path.abspath(os.path.join(str(git_dir), path)) if not os.path.isabs(path) else path


class ObjectView:
    """Run git against `git_dir`'s refs with the objects of every store in `stores` readable and
    a private scratch store for what git writes. Use as a context manager: the scratch goes."""

    def __init__(self, git_dir: str | Path, stores: list[str] | tuple[str, ...] = (), timeout: float = 120.0):
        self.git_dir = str(git_dir)
        self.timeout = timeout
        own = objects_dir(self.git_dir)
        self.stores = [own] + [s for s in stores if s != own]
        self.scratch = tempfile.mkdtemp(prefix="digest-bot-objects-")
        self.env = {
            **base_env(),
            "GIT_DIR": self.git_dir,
            "GIT_OBJECT_DIRECTORY": self.scratch,
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(self.stores),
            **SYNTHETIC_IDENTITY,
        }

    def __enter__(self) -> ObjectView:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def run(self, *args: str, ok: tuple[int, ...] = (0,), input: bytes | None = None) -> subprocess.CompletedProcess:
        """`git ARGS` with bytes out; raises GitFailed on an exit code outside `ok` or a timeout."""
        cmd = ["git", "-c", "core.quotePath=false", *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, env=self.env, input=input, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise GitFailed(
                phrase("downstream.git_timeout", command=args[0], seconds=f"{self.timeout:g}"), code=-1
            ) from None
        if proc.returncode not in ok:
            err = proc.stderr.decode("utf-8", "replace").strip()
            last = err.splitlines()[-1] if err else f"exit {proc.returncode}"
            raise GitFailed(f"git {args[0]} failed: {last}", err, proc.returncode)
        return proc

    def out(self, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        return self.run(*args, ok=ok).stdout.decode("utf-8", "replace")

    def resolve(self, rev: str) -> str | None:
        """The commit `rev` names, or None when it names none here."""
        proc = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1, 128))
        sha = proc.stdout.decode().strip()
        return sha if proc.returncode == 0 and sha else None

    def has_commit(self, sha: str) -> bool:
        return self.run("cat-file", "-e", f"{sha}^{{commit}}", ok=(0, 1, 128)).returncode == 0

    def present(self, shas: list[str]) -> list[str]:
        """Those of `shas` that are objects here, in one process (a day can have a thousand)."""
        if not shas:
            return []
        out = (
            self.run("cat-file", "--batch-check=%(objectname) %(objecttype)", input=("\n".join(shas) + "\n").encode())
            .stdout.decode()
            .splitlines()
        )
        return [sha for sha, line in zip(shas, out) if line.endswith(" commit")]

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, ok=(0, 1)).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, ok=(0, 1))
        return proc.stdout.decode().strip() or None

    def first_parent(self, sha: str) -> str | None:
        parents = self.out("rev-list", "--parents", "-n", "1", sha).split()[1:]
        return parents[0] if parents else None

    def commit_tree(self, tree: str, parents: tuple[str, ...] = ()) -> str:
        """A synthetic commit (into the scratch store) with this tree and these parents."""
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        return self.run(*args, "-m", "digest-bot synthetic").stdout.decode().strip()

    def touched_paths(self, sha: str, parent: str | None) -> set[str]:
        """Every path the commit changes against `parent`, both sides of a rename."""
        base = parent or EMPTY_TREE
        raw = self.run("diff-tree", "-r", "-z", "--no-renames", "--name-only", base, sha).stdout
        return {p.decode("utf-8", "replace") for p in raw.split(b"\0") if p}

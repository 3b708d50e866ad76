"""Builders shared by the offline analyser's tests: commits and file changes written by hand, and
small source files committed to real git repositories (tests/gitrepo.py) and read back through the
bot's own local git source, so patches, hunk headers and statuses are exactly what git produces."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from bot.analysis.offline import analyse_offline
from bot.analysis.repo_config import RepoProfile
from bot.core.models import ChangeType, Commit, FileChange, Importance
from bot.sources.localgit import LocalGitSource
from tests.gitrepo import GitRepo

HIGH, MEDIUM, LOW = Importance.HIGH, Importance.MEDIUM, Importance.LOW
T = ChangeType


def commit(title: str, body: str = "", **kw) -> Commit:
    return Commit(
        repo="vllm-project/vllm",
        sha="af9b69f977bd1166ed63c46f9ccbd3a02344ae4f",
        title=title,
        body=body,
        author="Robert Shaw",
        committed_at=datetime(2026, 1, 28, 15, 54, tzinfo=UTC),
        **kw,
    )


def mod(
    path: str,
    add: int = 0,
    dele: int = 0,
    patch: str | None = None,
    status: str = "modified",
    previous_path: str | None = None,
) -> FileChange:
    return FileChange(path=path, status=status, additions=add, deletions=dele, patch=patch, previous_path=previous_path)


def new(path: str, add: int, patch: str | None = None) -> FileChange:
    return mod(path, add, 0, patch, status="added")


def gone(path: str, dele: int, patch: str | None = None) -> FileChange:
    return mod(path, 0, dele, patch, status="removed")


def removed_patch(*lines: str) -> str:
    return f"@@ -1,{len(lines)} +0,0 @@\n" + "\n".join("-" + ln for ln in lines)


SRC = [mod("src/app/core.py", 12, 3)]

# --- commits in real git repositories ---------------------------------------------------------

WHEN = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


ENTRY_POINTS_V1 = """\
RESERVED = {"python", "pip"}


def check_entry_point(name: str) -> None:
    if name in RESERVED:
        raise ValueError(f"reserved entry point: {name}")
"""


HASHES_V1 = """\
def verify(hashes: dict[str, str], require_hashes: bool) -> bool:
    if require_hashes and not hashes:
        return False
    return True
"""


CARGO_V1 = """\
[package]
name = "app"
version = "0.4.0"
edition = "2021"

[dependencies]
serde = "1.0"

[profile.release]
lto = "fat"
codegen-units = 1
"""


OPTIONS_V1 = """\
{
  "properties": {
    "cache-dir": {
      "description": "Path to the cache directory.",
      "type": "string",
      "default": "~/.cache/app"
    }
  }
}
"""


def analyse_last(repo: GitRepo, lang: str = "en", profile: RepoProfile | None = None):
    source = LocalGitSource(str(repo.path))

    async def read():
        sha = repo.git("rev-parse", "HEAD").strip()
        c = await source.get_commit(sha)
        return c, await source.get_files(sha)

    c, files = asyncio.run(read())
    return analyse_offline(c, files, lang, profile=profile)

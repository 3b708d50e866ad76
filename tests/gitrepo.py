"""Build real git repositories with commits at exact instants (for window-edge tests)."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path


class GitRepo:
    def __init__(self, path: Path, bare_origin: str | None = None):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        if bare_origin:
            self.git("remote", "add", "origin", bare_origin)

    def git(self, *args: str, env: dict | None = None) -> str:
        full_env = {
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.path),
            "GIT_AUTHOR_NAME": "Test",
            "GIT_AUTHOR_EMAIL": "test@example.com",
            "GIT_COMMITTER_NAME": "Test",
            "GIT_COMMITTER_EMAIL": "test@example.com",
            **(env or {}),
        }
        return subprocess.run(
            ["git", "-C", str(self.path), *args], check=True, capture_output=True, text=True, env=full_env
        ).stdout

    def commit(
        self,
        message: str,
        files: dict[str, str | bytes | None] | None = None,
        *,
        when: datetime,
        author: str = "Ada Lovelace",
        email: str = "ada@example.com",
        committed: datetime | None = None,
    ) -> str:
        """Write (str/bytes) or delete (None) files, commit at `when` (aware), return the SHA."""
        for rel, content in (files or {}).items():
            target = self.path / rel
            if content is None:
                self.git("rm", "-q", "--", rel)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
            self.git("add", "--", rel)
        stamp = when.isoformat()
        env = {
            "GIT_AUTHOR_NAME": author,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_NAME": author,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": (committed or when).isoformat(),
        }
        self.git("commit", "-q", "--allow-empty", "-m", message, env=env)
        return self.git("rev-parse", "HEAD").strip()


def bulk_commits(
    repo: GitRepo,
    count: int,
    first: datetime,
    step_seconds: int = 30,
    *,
    files: int = 40,
    title: str = "fix: handle edge case {i} in module {m}",
    path: str = "src/mod_{m}.py",
) -> None:
    """`count` small commits from `first` on, `step_seconds` apart, through `git fast-import`
    (a thousand commits in well under a second, where `git commit` takes half a minute). Each
    writes the file `path` ({i}: the commit's number, {m}: its module)."""
    stamp0 = int(first.timestamp())
    offset = first.strftime("%z") or "+0000"
    try:
        has_main = bool(repo.git("rev-parse", "--verify", "--quiet", "refs/heads/main^{commit}").strip())
    except subprocess.CalledProcessError:
        has_main = False
    lines: list[bytes] = []
    for i in range(count):
        when = stamp0 + i * step_seconds
        message = (title.format(i=i, m=i % files) + "\n").encode()
        content = "".join(f"def f_{i}_{j}(x):\n    return x + {j}\n" for j in range(3)).encode()
        lines += [
            b"commit refs/heads/main",
            f"author Ada Lovelace <ada@example.com> {when} {offset}".encode(),
            f"committer Ada Lovelace <ada@example.com> {when} {offset}".encode(),
            f"data {len(message)}".encode(),
            message,
        ]
        if i == 0 and has_main:
            lines.append(b"from refs/heads/main^0")
        lines += [f"M 100644 inline {path.format(i=i, m=i % files)}".encode(), f"data {len(content)}".encode(), content]
    stream = b"\n".join(lines) + b"\n"
    subprocess.run(
        ["git", "-C", str(repo.path), "fast-import", "--quiet"], input=stream, check=True, capture_output=True
    )

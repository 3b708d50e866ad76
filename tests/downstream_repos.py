"""An upstream repository and a fork of it, as real git repositories, for the downstream tests.

upstream (main):   base ── C1 a.py:2 ── C2 b.py:2 ── C3 c.py:5 ── C4 adds fork_only.py
fork (ours):       base ── F1 a.py:2, b.py:18, adds fork_only.py ── F2 a.py:10

So on 2026-01-28, C1 conflicts (the fork rewrote line 2 of a.py, in 2 hunks of a.py), C2 touches
b.py cleanly (the fork's hunk is far away), C3 touches nothing the fork patches, C4 is an add/add
conflict on fork_only.py.
"""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")
DAY = "2026-01-28"


def lines(prefix: str, changes: dict[int, str] | None = None) -> str:
    rows = [f"{prefix} line {i}" for i in range(1, 21)]
    for number, value in (changes or {}).items():
        rows[number - 1] = value
    return "\n".join(rows) + "\n"


def build(root: Path) -> dict:
    up = GitRepo(root / "upstream")
    base = up.commit(
        "initial",
        {"a.py": lines("a"), "b.py": lines("b"), "c.py": lines("c")},
        when=datetime(2026, 1, 27, 10, 0, tzinfo=SH),
    )
    subprocess.run(["git", "clone", "-q", str(up.path), str(root / "fork")], check=True, capture_output=True)
    fork = GitRepo(root / "fork")
    fork.git("checkout", "-q", "-b", "ours")
    fork.commit(
        "fork: our own tweaks",
        {"a.py": lines("a", {2: "fork A2"}), "b.py": lines("b", {18: "fork B18"}), "fork_only.py": "ours\n"},
        when=datetime(2026, 1, 27, 12, 0, tzinfo=SH),
    )
    fork.commit(
        "fork: another tweak",
        {"a.py": lines("a", {2: "fork A2", 10: "fork A10"})},
        when=datetime(2026, 1, 27, 13, 0, tzinfo=SH),
    )
    shas = {"base": base}
    shas["C1"] = up.commit(
        "perf: rewrite line two of a", {"a.py": lines("a", {2: "up A2"})}, when=datetime(2026, 1, 28, 9, 0, tzinfo=SH)
    )
    shas["C2"] = up.commit(
        "fix: line two of b", {"b.py": lines("b", {2: "up B2"})}, when=datetime(2026, 1, 28, 10, 0, tzinfo=SH)
    )
    shas["C3"] = up.commit(
        "docs: c only", {"c.py": lines("c", {5: "up C5"})}, when=datetime(2026, 1, 28, 11, 0, tzinfo=SH)
    )
    shas["C4"] = up.commit(
        "feat: add fork_only upstream too", {"fork_only.py": "theirs\n"}, when=datetime(2026, 1, 28, 12, 0, tzinfo=SH)
    )
    shas["fork"] = fork.git("rev-parse", "HEAD").strip()
    return {"up": up, "fork": fork, "shas": shas}


def bare_copy(repo: GitRepo, target: Path) -> Path:
    """A bare clone at `target` (what a git host serves), all branches included."""
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(target)], check=True, capture_output=True)
    return target


def snapshot(repo: GitRepo) -> tuple[str, str, str, str]:
    """Everything a downstream check must leave as it was: refs, objects, index and work tree."""
    refs = repo.git("for-each-ref", "--format=%(refname) %(objectname)")
    objects = repo.git("count-objects", "-v")
    status = repo.git("status", "--porcelain", "--ignored")
    head = repo.git("rev-parse", "HEAD")
    return refs, objects, status, head

"""`git patch-id --stable` of commits of a local repository: what tells a cherry-pick onto a
release branch from a new change when its message has no `(cherry picked from commit …)` line
(bot/sources/branches.py)."""

from __future__ import annotations

import os
import subprocess


def git_patch_ids(path: str, shas: list[str]) -> dict[str, str]:
    """sha → its patch id ('' for none: a merge, an empty commit), in two git runs for them all."""
    found = dict.fromkeys(shas, "")
    if not shas:
        return found
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    shown = subprocess.run(
        ["git", "-C", path, "log", "--no-walk=unsorted", "--stdin", "-p", "--format=commit %H", "--"],
        input="\n".join(shas).encode(),
        capture_output=True,
        env=env,
    )
    ids = subprocess.run(["git", "-C", path, "patch-id", "--stable"], input=shown.stdout, capture_output=True, env=env)
    for line in ids.stdout.decode("ascii", "replace").splitlines():
        pid, _, sha = line.partition(" ")
        if sha in found:
            found[sha] = pid
    return found

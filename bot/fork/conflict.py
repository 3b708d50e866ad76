"""Would cherry-picking upstream commit C onto the fork's branch conflict? Without a checkout.

A cherry-pick is the three-way merge base = C's first parent, ours = the fork's tip, theirs = C.
Three ways to ask git for it, by version:

- git ≥ 2.40: `git merge-tree --write-tree --merge-base=C^ FORK C` — exactly that merge.
- git 2.38–2.39 (`--write-tree`, no `--merge-base`): two synthetic commits in the scratch store,
  X = (C's tree, parent C^) and Y = (FORK's tree, parent C^). Their only merge base is C^, so
  `git merge-tree --write-tree Y X` is the same three-way merge of the same three trees.
- older git: the deprecated trivial `git merge-tree BASE OURS THEIRS`, whose text output marks
  content conflicts with `<<<<<<<` and lists add/add and modify/delete cases by section.

All write only into the view's scratch object store (see git.py); the caller's repository, index,
working tree and refs are never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .git import EMPTY_TREE, ObjectView, git_version

MODES = ("merge-base", "synthetic", "trivial")


@dataclass(frozen=True)
class PickResult:
    conflict: bool
    files: tuple[str, ...] = ()  # the paths that conflict (empty when clean)


def default_mode() -> str:
    version = git_version()
    if version >= (2, 40):
        return "merge-base"
    if version >= (2, 38):
        return "synthetic"
    return "trivial"


def cherry_pick_conflicts(
    view: ObjectView, commit: str, onto: str, *, parent: str | None = None, mode: str | None = None
) -> PickResult:
    """The outcome of cherry-picking `commit` (its first parent as base, or `parent`) onto `onto`."""
    mode = mode or default_mode()
    if parent is None:
        parent = view.first_parent(commit)
    if mode == "merge-base" and parent is not None:
        return _write_tree(view, f"--merge-base={parent}", onto, commit)
    if mode in ("merge-base", "synthetic"):
        base = parent or view.commit_tree(EMPTY_TREE)  # a root commit picks onto an empty base
        theirs = view.commit_tree(f"{commit}^{{tree}}", (base,))
        ours = view.commit_tree(f"{onto}^{{tree}}", (base,))
        return _write_tree(view, ours, theirs)
    if mode == "trivial":
        return _trivial(view, parent or EMPTY_TREE, onto, commit)
    raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")


def _write_tree(view: ObjectView, *args: str) -> PickResult:
    proc = view.run("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", *args, ok=(0, 1))
    if proc.returncode == 0:
        return PickResult(False)
    # -z output: the result tree, NUL, then each conflicted path NUL-terminated, then (with
    # messages off) nothing more.
    parts = [p.decode("utf-8", "replace") for p in proc.stdout.split(b"\0")[1:] if p]
    return PickResult(True, tuple(dict.fromkeys(parts)))


_SECTION = re.compile(
    r"^(changed in both|added in both|added in local|added in remote|removed in local|"
    r"removed in remote|removed in both)$"
)
_STAGE = re.compile(r"^  (base|our|their)\s+(\d+) ([0-9a-f]+) (.*)$")


def _trivial(view: ObjectView, base: str, ours: str, theirs: str) -> PickResult:
    """Parse the trivial merge's report: a section per path merged, with its three stages and,
    for content merges, a diff whose lines show conflict markers."""
    text = view.out("merge-tree", base, ours, theirs)
    conflicted: list[str] = []
    section, markers = "", False
    stages: dict[str, tuple[str, str]] = {}

    def close():
        if not section:
            return
        path = (stages.get("our") or stages.get("their") or stages.get("base") or ("", ""))[1]
        shas = {k: v[0] for k, v in stages.items()}
        if markers:
            conflicted.append(path)
        elif section == "added in both" and shas.get("our") != shas.get("their"):
            conflicted.append(path)
        elif section == "removed in local" and shas.get("their") not in (None, shas.get("base")):
            conflicted.append(path)  # we deleted what they changed
        elif section == "removed in remote" and shas.get("our") not in (None, shas.get("base")):
            conflicted.append(path)  # they deleted what we changed

    for line in text.splitlines():
        if _SECTION.match(line):
            close()
            section, stages, markers = line, {}, False
        elif m := _STAGE.match(line):
            stages[m.group(1)] = (m.group(3), m.group(4))
        elif line.startswith("+<<<<<<<") or line.startswith("+>>>>>>>"):
            markers = True
    close()
    return PickResult(bool(conflicted), tuple(dict.fromkeys(conflicted)))

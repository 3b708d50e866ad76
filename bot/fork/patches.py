"""The fork's own changes: what its branch changes against its merge base with upstream.

Files and the number of hunks the fork keeps in each (`git diff -U0 BASE FORK`, so adjacent
edits are not merged into one hunk by context lines). A file the fork adds or deletes counts as
patched; a binary or mode-only change counts as one hunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .git import ObjectView


@dataclass(frozen=True)
class ForkPatches:
    base: str  # merge base of the fork's tip and the upstream tip
    tip: str  # the fork's tip
    hunks: dict[str, int] = field(default_factory=dict)  # path → hunks the fork keeps there

    def touched(self, paths: set[str]) -> tuple[str, ...]:
        return tuple(sorted(p for p in paths if p in self.hunks))


def read_patches(view: ObjectView, base: str, tip: str) -> ForkPatches:
    names = [
        p.decode("utf-8", "replace")
        for p in view.run("diff", "--no-renames", "--no-ext-diff", "--name-only", "-z", base, tip).stdout.split(b"\0")
        if p
    ]
    if not names:
        return ForkPatches(base, tip, {})
    patch = view.run("diff", "--no-renames", "--no-ext-diff", "--no-color", "-U0", base, tip).stdout
    # Both listings come in git's path order, one `diff --git` block per name.
    counts: list[int] = []
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            counts.append(0)
        elif line.startswith(b"@@ ") and counts:
            counts[-1] += 1
    if len(counts) != len(names):  # never expected; keep the files, count one hunk each
        counts = [1] * len(names)
    return ForkPatches(base, tip, {name: max(n, 1) for name, n in zip(names, counts)})

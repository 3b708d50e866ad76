"""A patch's hunks: parsed from its text, runs of deletion-only hunks shortened to a marker, and a
hunk (or a whole patch) clipped to the tokens left for it.

Both selections (packing.py: a commit's diff for the analysis; relevant.py: the hunks a question
asks about) cut patches the same way, and the reader's side (reader.py) reads back the markers
written here in place of what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .tokens import estimate_tokens

# A clipped patch must keep at least this much (a few dozen diff lines) to be worth showing.
CLIP_MIN_TOKENS = 80
# What an entry says in place of a patch for a file whose content did not change.
NO_CONTENT = "(no content changes)"


@dataclass
class Hunk:
    header: str  # the "@@ -a,b +c,d @@ …" line
    lines: list[str]

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def deleted(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))

    @property
    def deletion_only(self) -> bool:
        return self.deleted > 0 and self.added == 0

    def text(self) -> str:
        return "\n".join([self.header, *self.lines])


def parse_patch(patch: str) -> tuple[list[str], list[Hunk]]:
    """(lines before the first hunk, hunks)."""
    prelude: list[str] = []
    hunks: list[Hunk] = []
    for line in patch.split("\n"):
        if line.startswith("@@"):
            hunks.append(Hunk(line, []))
        elif hunks:
            hunks[-1].lines.append(line)
        else:
            prelude.append(line)
    if hunks and hunks[-1].lines and hunks[-1].lines[-1] == "":
        hunks[-1].lines.pop()  # the patch's trailing newline
    return prelude, hunks


def without_deletion_only_hunks(hunks: Sequence[Hunk]) -> list[str]:
    """The hunks' lines, each run of deletion-only hunks replaced by a one-line marker."""
    out: list[str] = []
    run_hunks = run_lines = 0
    for hunk in [*hunks, None]:
        if hunk is not None and hunk.deletion_only:
            run_hunks += 1
            run_lines += hunk.deleted
            continue
        if run_hunks:
            plural = "s" if run_hunks > 1 else ""
            out.append(f"[… {run_hunks} deletion-only hunk{plural} omitted (−{run_lines} lines)]")
            run_hunks = run_lines = 0
        if hunk is not None:
            out.extend([hunk.header, *hunk.lines])
    return out


def clip_lines(head: str, lines: Sequence[str], allowance: int) -> tuple[str, int] | None:
    """(text, cost): head + the longest prefix of `lines` that fits + a "clipped" marker, within
    `allowance`. Cuts between lines; only an enormous line that leaves most of the room unused is
    cut inside. None when less than CLIP_MIN_TOKENS of content would fit."""
    room = allowance - estimate_tokens(head) - 1 - _marker_cost(len(lines))
    if room < CLIP_MIN_TOKENS:
        return None
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    whole_lines = len(kept)
    if whole_lines < len(lines) and used < room // 2:
        piece = _cut_to_tokens(lines[whole_lines], room - used - 1)
        if piece:
            kept.append(piece)
    if not kept:
        return None
    text = "\n".join([head, *kept, _clip_marker(len(lines) - whole_lines)])
    return text, estimate_tokens(text)


def _clip_marker(lines_left: int) -> str:
    return f"[… clipped: {lines_left} more line{'s' if lines_left != 1 else ''} not shown]"


def _marker_cost(lines_total: int) -> int:
    return estimate_tokens(_clip_marker(lines_total)) + 1  # the count only shrinks


def _cut_to_tokens(text: str, allowance: int) -> str:
    """A prefix of one huge line whose estimate (with a trailing " …") fits `allowance`."""
    length = min(len(text), max(0, allowance) * 4)
    while length > 0:
        cost = estimate_tokens(text[:length] + " …")
        if cost <= allowance:
            return text[:length] + " …"
        length = min(length - 1, length * allowance // cost - 1)
    return ""

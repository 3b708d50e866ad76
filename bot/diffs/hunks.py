"""A patch's hunks: parsed from its text, runs of deletion-only hunks shortened to a marker, and a
hunk (or a whole patch) clipped to the tokens left for it.

Both selections (packing.py: a commit's diff for the analysis; relevant.py: the hunks a question
asks about) cut patches the same way, and the reader's side (reader.py) reads back the markers
written here in place of what was left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat

from .tokens import estimate_tokens

# A clipped patch must keep at least this much (a few dozen diff lines) to be worth showing.
CLIP_MIN_TOKENS = 80
# What an entry says in place of a patch for a file whose content did not change.
NO_CONTENT = "(no content changes)"


@dataclass
class Hunk:
    header: str  # the "@@ -a,b +c,d @@ …" line
    lines: list[str]

    # (the lines are tested by `map` in C, not a generator: a prompt's selection asks every
    # hunk of every file shown whether it only deletes)
    @property
    def added(self) -> int:
        return sum(map(str.startswith, self.lines, repeat("+")))

    @property
    def deleted(self) -> int:
        return sum(map(str.startswith, self.lines, repeat("-")))

    @property
    def deletion_only(self) -> bool:
        """deleted > 0 and added == 0, each test stopping at the first line that decides it."""
        lines = self.lines
        return not any(map(str.startswith, lines, repeat("+"))) and any(map(str.startswith, lines, repeat("-")))

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


# =============================================================================================
# Blocks: a long hunk cut where its code is cut (an offline answer shows the parts asked about)
# =============================================================================================

_RANGE = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$")
# Where a definition starts, at the top level or one level in (a method): Python, Rust, Go, JS/TS,
# Java-ish declarations, decorators, and comment rules (`# --- section ---`).
_DEFINITION = (
    r"(?:(?:async\s+)?def\s|class\s|(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s|func\s|function\s|impl\b"
    r"|(?:pub\s+)?(?:struct|enum|trait|interface|mod)\s|export\s|@\w)"
)
_RULE = r"(?:#|//)\s*[-=]{3,}"
# Where a definition starts: at the top level (a strong cut), or one level in (a method: a weak
# cut, taken only when the definition around it is too long to show whole); Python, Rust, Go,
# JS/TS, Java-ish declarations, decorators, and comment rules (`# --- section ---`).
_TOP = re.compile(f"^(?:{_DEFINITION}|{_RULE})")
_BOUNDARY = re.compile(f"^\\s{{0,4}}(?:{_DEFINITION}|{_RULE})")
MIN_BLOCK_LINES = 8  # a smaller piece (a constant, a one-line helper) joins the one after it
# Lines that bring names in: a run of them is a block of its own, so the code after them is
# shown without them (and they are shown only when they are what was asked about).
IMPORT_LINE = re.compile(r"^\s*(?:import\s|from\s+\S+\s+import\s|use\s|#include\b|require\(|extern crate\s)")


def split_hunk(hunk: Hunk, max_lines: int) -> list[Hunk]:
    """`hunk` as blocks of at most `max_lines` lines, each under its own `@@` header (its line
    numbers, and the definition it is in when it does not start one). Cut where a top-level
    definition starts; one too long is cut where its methods start (consecutive methods kept
    together while they fit), else after a blank line, else at the limit. A hunk that fits is
    returned whole."""
    if len(hunk.lines) <= max_lines:
        return [hunk]
    blocks: list[list[str]] = []
    for piece in _pieces(hunk.lines, _TOP):
        chunks: list[list[str]] = []
        for part in _pieces(piece, _BOUNDARY) if len(piece) > max_lines else [piece]:
            for chunk in _cut(part, max_lines):
                if chunks and len(chunks[-1]) + len(chunk) <= max_lines:
                    chunks[-1].extend(chunk)
                else:
                    chunks.append(chunk)
        for chunk in chunks:
            joins = blocks and len(blocks[-1]) < MIN_BLOCK_LINES and len(blocks[-1]) + len(chunk) <= max_lines
            if joins and not (_imports_only(blocks[-1]) or _imports_only(chunk)):
                blocks[-1].extend(chunk)
            else:
                blocks.append(chunk)
    return _with_headers(hunk.header, blocks)


def _imports_only(lines: list[str]) -> bool:
    code = [line[1:] for line in lines if line[1:].strip()]
    return bool(code) and all(IMPORT_LINE.match(c) for c in code)


def _pieces(lines: list[str], start: re.Pattern) -> list[list[str]]:
    """`lines` cut before each line whose code matches `start` (not after a decorator), and where
    a run of imports starts and ends."""
    pieces: list[list[str]] = []
    importing = False  # the last line with code was an import
    for i, line in enumerate(lines):
        code = line[1:]
        after_decorator = i > 0 and lines[i - 1][1:].lstrip().startswith("@")
        is_import = bool(IMPORT_LINE.match(code))
        turns = bool(code.strip()) and is_import != importing
        if not pieces or turns or (start.match(code) and not after_decorator):
            pieces.append([])
        pieces[-1].append(line)
        if code.strip():
            importing = is_import
    return pieces


def _cut(lines: list[str], max_lines: int) -> list[list[str]]:
    """`lines` in runs of at most `max_lines`, each cut after the last blank line of its second half."""
    out: list[list[str]] = []
    while len(lines) > max_lines:
        blank = [i for i in range(max_lines // 2, max_lines) if not lines[i][1:].strip()]
        at = blank[-1] + 1 if blank else max_lines
        out.append(lines[:at])
        lines = lines[at:]
    return [*out, lines] if lines else out


def _with_headers(header: str, blocks: list[list[str]]) -> list[Hunk]:
    match = _RANGE.match(header)
    old, new = (int(match[1]), int(match[2])) if match else (1, 1)
    around = match[3].strip() if match else ""
    out: list[Hunk] = []
    for lines in blocks:
        olds = sum(1 for line in lines if line[:1] in (" ", "-", ""))
        news = sum(1 for line in lines if line[:1] in (" ", "+", ""))
        # A range of no lines names the line before it (`-0,0` for a new file), as git writes it.
        old_at = old if olds else max(old - 1, 0)
        new_at = new if news else max(new - 1, 0)
        context = "" if _BOUNDARY.match(lines[0][1:]) else around
        out.append(Hunk(f"@@ -{old_at},{olds} +{new_at},{news} @@{' ' + context if context else ''}", lines))
        old += olds
        new += news
        for line in lines:
            if _BOUNDARY.match(line[1:]) and not line[1:].lstrip().startswith(("@", "#", "//")):
                around = line[1:].strip()[:80]
    return out

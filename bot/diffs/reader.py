"""What the reader is told about a diff, in their language: the coverage line under an analysis
("Analysed 3 of 5 files; not shown: …"), and the diff text's own markers said again for a reader
shown the text itself (`for_reader`).

Its own module because it reads the catalogue (bot/i18n) and the selection does not: the diff
text the model reads keeps its English markers (hunks.py, packing.py), which this only parses.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ..core.file_kinds import extension, is_build_artefact
from ..core.models import Coverage
from ..i18n import catalogue, text
from .hunks import NO_CONTENT

# The diff text's own markers (hunks.py, packing.py) stay English: they are data for the model,
# and part of the prompts' cached shape. A reader shown the text itself (the offline answer) reads
# them in their language: `for_reader` says each marker line again from the catalogue's [diff_view].
_CLIPPED_LINE = re.compile(r"\[… clipped: (\d+) more lines? not shown\]")
_TAIL_HEAD = re.compile(r"Not shown \((\d+) files?\):")
_TAIL_MORE = re.compile(r"… and (\d+) more files?")
_TAIL_COMPACT = re.compile(r"\[(\d+) files? not shown\]")
_TAIL_ITEM = re.compile(r"- (.+) \(([a-z ]+)\)")
_BARE_RENAME = re.compile(r"renamed: (.+) → (.+) " + re.escape(NO_CONTENT))
_BARE = re.compile(r"([a-z]+): (.+) " + re.escape(NO_CONTENT))


def for_reader(diff_text: str, lang: str) -> str:
    """`diff_text` (from select_diff / relevant_hunks) with its marker lines — a clipped hunk, a
    file without content changes, the closing list of files not shown and why — in `lang`. Diff
    lines themselves (+, -, space, @@, ###) are left as they are."""
    lang = "zh" if lang.lower().startswith("zh") else "en"
    out: list[str] = []
    in_tail = False
    for line in diff_text.split("\n"):
        said = _marker_line(line, lang, in_tail)
        in_tail = in_tail or _TAIL_HEAD.fullmatch(line) is not None
        out.append(line if said is None else said)
    return "\n".join(out)


def _form(n: str) -> str:
    return "one" if n == "1" else "other"


def _marker_line(line: str, lang: str, in_tail: bool) -> str | None:
    if m := _CLIPPED_LINE.fullmatch(line):
        return text(lang, f"diff_view.clipped.{_form(m[1])}", n=m[1])
    if m := _TAIL_HEAD.fullmatch(line):
        return text(lang, f"diff_view.not_shown.{_form(m[1])}", n=m[1])
    if m := _TAIL_COMPACT.fullmatch(line):
        return text(lang, f"diff_view.compact.{_form(m[1])}", n=m[1])
    if m := _BARE_RENAME.fullmatch(line):
        return text(lang, "diff_view.renamed", old=m[1], path=m[2])
    if (m := _BARE.fullmatch(line)) and f"diff_view.status.{m[1]}" in catalogue(lang):
        return text(lang, "diff_view.unchanged", status=text(lang, f"diff_view.status.{m[1]}"), path=m[2])
    if in_tail and (m := _TAIL_MORE.fullmatch(line)):
        return text(lang, f"diff_view.more.{_form(m[1])}", n=m[1])
    if in_tail and (m := _TAIL_ITEM.fullmatch(line)):
        return "- " + text(lang, "coverage.omitted_file", path=m[1], reason=_reason(m[2], lang))
    return None


# =============================================================================================
# Coverage line
# =============================================================================================

# How many names the line spells out before "+N more" / "等 N 个".
COVERAGE_MAX_NAMES = 5
_MAX_SHOWN_PATH = 48


def _short_path(path: str) -> str:
    if len(path) <= _MAX_SHOWN_PATH:
        return path
    tail = "/".join(path.split("/")[-2:])
    if len(tail) > _MAX_SHOWN_PATH - 2:
        tail = posixpath.basename(path)
    return "…/" + tail


class _Listed:
    """Up to COVERAGE_MAX_NAMES names, then how many more, as a field told in the reader's
    language. The languages count differently — English the rest ("+2 more"), Chinese all of
    them ("等 7 个"): both numbers are given, each template takes its own; Chinese puts no
    space between a full-width character and the count (`names_more_after_wide`)."""

    __slots__ = ("names",)

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)

    def say(self, lang: str) -> str:
        shown = self.names[:COVERAGE_MAX_NAMES]
        rest = len(self.names) - len(shown)
        listed = text(lang, "coverage.list_sep").join(shown)
        if not rest:
            return listed
        key = "coverage.names_more" if listed[-1:].isascii() else "coverage.names_more_after_wide"
        return text(lang, key, names=listed, rest=rest, total=len(self.names))


def _reason(reason: str, lang: str) -> str:
    """Why a file is not shown, in the reader's words; a reason the catalogue does not know (one
    stored by another version) as it was stored."""
    key = f"coverage.reason.{reason.replace(' ', '_')}"
    return text(lang, key) if key in catalogue(lang) else reason


def coverage_line(coverage: Coverage, lang: str) -> str:
    """One line telling the reader how much of the diff the analysis saw."""
    lang = "zh" if lang.lower().startswith("zh") else "en"
    total = coverage.files_total
    if total == 0:
        return text(lang, "coverage.no_files")
    form = "one" if total == 1 else "other"
    if coverage.complete:
        return text(lang, f"coverage.all_analysed.{form}", total=total)
    pieces = [text(lang, f"coverage.analysed_of.{form}", shown=coverage.files_shown, total=total)]
    if coverage.omitted:
        artefacts = [p for p, _ in coverage.omitted if is_build_artefact(p)]
        names = [
            text(lang, "coverage.omitted_file", path=_short_path(p), reason=_reason(r, lang))
            for p, r in coverage.omitted
            if not is_build_artefact(p)
        ]
        if artefacts:  # counted, never listed: a name of __pycache__/x.cpython-311.pyc tells nothing
            exts = sorted({f".{extension(p)}" if extension(p) else "__pycache__/" for p in artefacts})
            form_a = "one" if len(artefacts) == 1 else "other"
            names.insert(0, text(lang, f"coverage.artefacts.{form_a}", n=len(artefacts), exts=" ".join(exts)))
        pieces.append(text(lang, "coverage.not_shown", files=_Listed(names).say(lang)))
    if coverage.partial:
        clipped = _Listed([_short_path(p) for p in coverage.partial])
        pieces.append(text(lang, "coverage.clipped", files=clipped.say(lang)))
    return text(lang, "coverage.sep").join(pieces)

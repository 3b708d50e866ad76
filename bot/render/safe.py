"""The one filter every renderer applies to untrusted text (commit text, LLM output, names).

Control characters can ring the terminal's bell, retitle or clear it (ESC sequences reach the
operator through the CLI's Markdown), hide text (NUL) or reorder what a reader sees (bidi
overrides and isolates, the "Trojan Source" trick). Removed: C0 controls except tab and newline,
DEL, C1 controls, U+202A–U+202E and U+2066–U+2069. Carriage returns become newlines.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: object) -> str:
    return _CONTROL.sub("", str(text if text is not None else "").replace("\r\n", "\n").replace("\r", "\n"))


# --- Markdown (the report, the changelog) --------------------------------------------------------
#
# Escaped once, for Markdown, where the text is put into it (never before: an analysis or a title
# is stored as written). Only what Markdown would read as markup is escaped: a lone `&` stays `&`
# (`Q&A`), and becomes `&amp;` only where it would start a character reference (`&amp;`, `&#38;`).

_ENTITY_START = re.compile(r"&(?=#?[A-Za-z0-9]+;)")

# A one-line plain text (titles, names, paths) escaped completely, so it renders literally.
_INLINE = str.maketrans(
    {
        "\\": "\\\\",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "|": "\\|",
        "*": "\\*",
        "_": "\\_",
        "`": "\\`",
        "#": "\\#",
        "~": "\\~",
        "!": "\\!",
    }
)


def esc(text: str) -> str:
    """Escape a one-line plain text (titles, names, paths) completely: it renders literally."""
    return _ENTITY_START.sub("&amp;", " ".join(strip_controls(text).split())).translate(_INLINE)


_LINE_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|```+|~~~+|[=\-_*]{3,}\s*$|=+\s*$)")


def esc_rich(text: str) -> str:
    """Escape untrusted prose (LLM output, commit bodies) but keep `code`, **bold** and list
    lines: no HTML, no links or images, no headings, fences, rules or tables, no indentation
    tricks. Lines are kept as hard line breaks."""
    lines = []
    for raw in strip_controls(text).split("\n"):
        line = raw.strip()
        if not line:
            continue
        line = (
            _ENTITY_START.sub("&amp;", line.replace("\\", "\\\\"))
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace("[", "\\[")
            .replace("]", "\\]")
            .replace("|", "\\|")
        )
        line = _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line)
        lines.append(line)
    return "  \n".join(lines)

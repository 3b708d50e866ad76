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


# Markdown: a one-line plain text (titles, names, paths) escaped completely, so it renders literally.
_INLINE = str.maketrans(
    {
        "\\": "\\\\",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
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
    return " ".join(strip_controls(text).split()).translate(_INLINE)

"""No invented citations: a streamed answer's commit SHAs are checked against the sources it was given.

The model is asked to cite short SHAs in brackets. As the answer streams, every hex word of 7 to
40 characters is looked at once it is complete (a trailing word is held back until the next piece
shows where it ends): a prefix of a source's SHA stays; anything else that looks like a SHA
(letters and digits both) is replaced by the catalogue's marker, so the reader never sees a
citation of a commit the bot did not retrieve. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RUN = re.compile(r"(?<![0-9A-Za-z])([0-9a-fA-F]{7,40})(?![0-9A-Za-z])")
_TAIL = re.compile(r"[0-9A-Za-z]+$")  # a word still being written: held back whole


class CitationGuard:
    def __init__(self, shas: Iterable[str], marker: str):
        self.shas = [s.lower() for s in shas]
        self.marker = marker
        self.buffer = ""
        self.before = ""  # the last character released (for the word boundary)
        self.cited: list[str] = []  # full SHAs cited, in order of first citation
        self.refused: list[str] = []  # SHA-like words that named no source

    def feed(self, piece: str) -> str:
        self.buffer += piece or ""
        tail = _TAIL.search(self.buffer)
        cut = tail.start() if tail else len(self.buffer)
        out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return self._check(out)

    def flush(self) -> str:
        out, self.buffer = self.buffer, ""
        return self._check(out)

    def _check(self, text: str) -> str:
        if not text:
            return ""
        checked = _RUN.sub(self._one, self.before + text)[len(self.before) :]
        self.before = text[-1]
        return checked

    def _one(self, match: re.Match) -> str:
        word = match.group(1)
        low = word.lower()
        full = next((s for s in self.shas if s.startswith(low)), None)
        if full is not None:
            if full not in self.cited:
                self.cited.append(full)
            return word
        if re.search(r"[a-f]", low) and re.search(r"\d", low):
            self.refused.append(word)
            return self.marker
        return word  # a number, or an English word made of a–f letters

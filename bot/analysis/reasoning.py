"""Reasoning models (DeepSeek-R1 distills, Qwen3 …) write `<think>…</think>` before the answer,
often with braces and draft JSON inside. Neither the parser nor a reader may see it: removed from
whole answers (`strip_reasoning`) and from streams, even when a tag is split across pieces
(`ReasoningFilter`)."""
from __future__ import annotations

import re
from typing import Sequence

REASONING_TAGS = ("think", "thinking", "reasoning", "reflection")
_REASONING_BLOCK = re.compile(r"<(%s)>.*?</\1\s*>" % "|".join(REASONING_TAGS), re.S | re.I)
_REASONING_CLOSE = re.compile(r"</(?:%s)\s*>" % "|".join(REASONING_TAGS), re.I)
_REASONING_OPEN = re.compile(r"<(?:%s)>" % "|".join(REASONING_TAGS), re.I)


def strip_reasoning(text: str) -> str:
    """The answer without its reasoning: whole blocks; a closing tag whose opening was in the
    chat template (everything before it); an opening tag never closed (everything after it)."""
    text = _REASONING_BLOCK.sub("", text)
    closing = None
    for closing in _REASONING_CLOSE.finditer(text):
        pass
    if closing is not None:
        text = text[closing.end():]
    opening = _REASONING_OPEN.search(text)
    return text[:opening.start()] if opening else text


class ReasoningFilter:
    """Removes `<think>…</think>` (and its kin) from a stream of text pieces, even when a tag is
    split across pieces: text that could be the start of a tag is held back until it is not."""

    _OPEN = tuple(f"<{t}>" for t in REASONING_TAGS)

    def __init__(self):
        self._pending = ""
        self._inside: str | None = None  # the closing tag awaited

    def feed(self, piece: str) -> str:
        self._pending += piece
        out = []
        while self._pending:
            low = self._pending.lower()
            if self._inside is not None:
                end = low.find(self._inside)
                if end < 0:  # keep only what could be the start of the closing tag
                    cut = low.rfind("<")
                    keep = cut >= 0 and _could_start(low[cut:], (self._inside,))
                    self._pending = self._pending[cut:] if keep else ""
                    break
                self._pending = self._pending[end + len(self._inside):]
                self._inside = None
                continue
            starts = [(low.find(tag), tag) for tag in self._OPEN if low.find(tag) >= 0]
            if starts:
                start, tag = min(starts)
                out.append(self._pending[:start])
                self._pending = self._pending[start + len(tag):]
                self._inside = "</" + tag[1:]
                continue
            cut = low.rfind("<")
            if cut >= 0 and _could_start(low[cut:], self._OPEN):
                out.append(self._pending[:cut])
                self._pending = self._pending[cut:]
            else:
                out.append(self._pending)
                self._pending = ""
            break
        return "".join(out)

    def flush(self) -> str:
        """What is left at the end: held-back text that never became a tag (unclosed reasoning
        stays hidden)."""
        rest, self._pending = ("" if self._inside else self._pending), ""
        return rest


def _could_start(text: str, tags: Sequence[str]) -> bool:
    return any(tag.startswith(text) for tag in tags)

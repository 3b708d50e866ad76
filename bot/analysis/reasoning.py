"""Reasoning models (DeepSeek-R1 distills, Qwen3 …) write `<think>…</think>` before the answer,
often with braces and draft JSON inside. Neither the parser nor a reader may see it: removed from
whole answers (`strip_reasoning`) and from streams, even when a tag is split across pieces
(`ReasoningFilter`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

REASONING_TAGS = ("think", "thinking", "reasoning", "reflection")
_REASONING_BLOCK = re.compile(r"<(%s)>.*?</\1\s*>" % "|".join(REASONING_TAGS), re.S | re.I)
_REASONING_CLOSE = re.compile(r"</(?:%s)\s*>" % "|".join(REASONING_TAGS), re.I)
_REASONING_OPEN = re.compile(r"<(?:%s)>" % "|".join(REASONING_TAGS), re.I)


def strip_reasoning(text: str) -> str:
    """The answer without its reasoning: whole blocks; a closing tag whose opening was in the
    chat template (everything before it); an opening tag never closed (everything after it)."""
    text = _REASONING_BLOCK.sub("", text)
    closing = None
    for closing in _REASONING_CLOSE.finditer(text):  # noqa: B007 — the last one is wanted, after the loop
        pass
    if closing is not None:
        text = text[closing.end() :]
    opening = _REASONING_OPEN.search(text)
    return text[: opening.start()] if opening else text


def opened_by_template(text: str) -> bool:
    """True when an answer closes a reasoning block it never opened: the chat template wrote the
    opening tag into the prompt (DeepSeek-R1 distills served by llama.cpp do)."""
    return bool(_REASONING_CLOSE.search(_REASONING_BLOCK.sub("", text or "")))


_CLOSE = tuple(f"</{t}>" for t in REASONING_TAGS)


class ReasoningFilter:
    """Removes `<think>…</think>` (and its kin) from a stream of text pieces, even when a tag is
    split across pieces: text that could be the start of a tag is held back until it is not.

    `pre_opened`: the endpoint's template opens the block itself, so the stream may start inside
    one. Everything is held back until a closing tag (what came before was reasoning) or an
    opening one (it was not); a stream that shows neither is given out whole at the end."""

    _OPEN = tuple(f"<{t}>" for t in REASONING_TAGS)

    def __init__(self, pre_opened: bool = False):
        self._pending = ""
        self._inside: str | None = None  # the closing tag awaited
        self._undecided = pre_opened

    def feed(self, piece: str) -> str:
        self._pending += piece
        if self._undecided:
            low = self._pending.lower()
            close = min((i for i in (low.find(t) for t in _CLOSE) if i >= 0), default=-1)
            opening = min((i for i in (low.find(t) for t in self._OPEN) if i >= 0), default=-1)
            if close < 0 and opening < 0:
                return ""
            self._undecided = False
            if close >= 0 and (opening < 0 or close < opening):
                self._pending = self._pending[low.index(">", close) + 1 :]
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
                self._pending = self._pending[end + len(self._inside) :]
                self._inside = None
                continue
            starts = [(low.find(tag), tag) for tag in self._OPEN if low.find(tag) >= 0]
            if starts:
                start, tag = min(starts)
                out.append(self._pending[:start])
                self._pending = self._pending[start + len(tag) :]
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
        self._undecided = False
        return rest


def _could_start(text: str, tags: Sequence[str]) -> bool:
    return any(tag.startswith(text) for tag in tags)

"""Is a text written in the reader's language? (Chinese or English; the two the bot speaks.)

A small model asked for Chinese often answers in English (the commit it read is English). Code
is the same in both: backticked spans, URLs, paths, identifiers (snake_case, camelCase, dotted,
flags), numbers and quoted titles are set aside, and the prose left is judged by its words: a Chinese character
counts as a word. Chinese prose keeps English technical terms ("修复 resolver 的回归"), so a
Chinese text is wrong only when its English words clearly outnumber its Chinese characters; an
English text only when it is mostly Chinese (quoting a Chinese title is fine). Too little prose
to tell (fewer than MIN_WORDS words) is never judged wrong.
"""

from __future__ import annotations

import functools
import re

MIN_WORDS = 4  # fewer prose words than this: not enough to judge
_PATH_CHAR = r"[^\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef“”「」\"]"  # a path ends at Chinese or a quote


@functools.cache
def _code() -> re.Pattern[str]:
    """The code spans set aside (compiled on first use: 4 ms an import of this module spent on it
    for a digest that never judges a language)."""
    return re.compile(
        r"`[^`]*`"  # inline code
        r"|“[^”]{1,200}”|「[^」]{1,200}」|\"[^\"\n]{1,200}\""  # a quoted title or message, in its own language
        r"|https?://\S+"  # links
        rf"|{_PATH_CHAR}*[/\\]{_PATH_CHAR}*"  # paths
        r"|[A-Za-z0-9]+(?:[_.:-][A-Za-z0-9]+)+"  # snake_case, dotted.names, kebab-flags, versions
        r"|\b[a-z]+[A-Z]\w*"  # camelCase
        r"|#\d+|\b[0-9a-f]{7,40}\b|\d+"  # PR numbers, SHAs, numbers
    )


_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def prose_counts(text: str) -> tuple[int, int]:
    """(Chinese characters, English words) in `text` outside its code."""
    prose = _code().sub(" ", text or "")
    return len(_CJK.findall(prose)), len(_LATIN_WORD.findall(prose))


def wrong_language(text: str, lang: str) -> bool:
    """True when `text` is clearly not in `lang` ("zh" or "en"; any other: never wrong)."""
    cjk, latin = prose_counts(text)
    if cjk + latin < MIN_WORDS:
        return False
    if lang == "zh":
        return latin >= MIN_WORDS and cjk * 2 < latin
    if lang == "en":
        return cjk >= 2 * MIN_WORDS and cjk > 2 * latin
    return False


def asked_in(question: str) -> str | None:
    """The language a question is written in, when its prose says ("zh" with any Chinese, "en"
    with English words and no Chinese), else None. A reader who asks in English in a Chinese
    channel may be answered in English."""
    cjk, latin = prose_counts(question)
    if cjk:
        return "zh"
    return "en" if latin else None


def language_name(lang: str) -> str:
    """How a corrective message names the wanted language to the model (prompts are English-led)."""
    return "Simplified Chinese (简体中文)" if lang == "zh" else "English"

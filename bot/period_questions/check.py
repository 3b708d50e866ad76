"""Is a streamed answer about a period fit to post? Two refusals, judged on its opening (pure):

- a copy: the answer is (nearly) nothing but the lines it was given — `[abc1234] 2026-05-02 ·
  feature · medium · Title` and its summary — repeated instead of answering (a small model does
  this). Most of its words sit in runs of COPY_RUN words that also run in one of its sources' lines;
- the wrong language: bot.analysis.language.wrong_language (code, paths and SHAs set aside).

Judged on the first JUDGE_CHARS characters, held back before anything is posted (or on the whole
answer when it is shorter) by the same mechanism as a commit answer's language check
(bot/answers/commit_qa.py: stream_fitted with a HeadCheck, built in period_answer.py): a copied or wrong-language answer shows itself in its opening, and a
refusal then costs the reader nothing visible — the corrective retry replaces it unseen. The rest
streams as it comes, unjudged (an answer is not held whole: the reader would wait for all of it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..analysis.language import wrong_language

JUDGE_CHARS = 240  # the opening judged before anything is posted
COPY_RUN = 4  # words in a row shared with a source line that count as copied
COPY_SHARE = 0.8  # share of an answer's words copied that makes it a copy
MIN_WORDS = 6  # fewer words than this: too short to call a copy
_WORDS = re.compile(r"[0-9a-z]+|[\u3400-\u9fff\uf900-\ufaff]", re.IGNORECASE)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text or "")]


def copied(answer: str, lines: Sequence[str]) -> bool:
    """Is `answer` (nearly) only the given `lines` repeated?"""
    said = words(answer)
    if len(said) < MIN_WORDS:
        return False
    runs = {
        tuple(ws[i : i + COPY_RUN]) for line in lines for ws in [words(line)] for i in range(len(ws) - COPY_RUN + 1)
    }
    covered = [False] * len(said)
    for i in range(len(said) - COPY_RUN + 1):
        if tuple(said[i : i + COPY_RUN]) in runs:
            covered[i : i + COPY_RUN] = [True] * COPY_RUN
    return sum(covered) >= COPY_SHARE * len(said)


def problem(answer: str, lang: str, lines: Sequence[str]) -> str:
    """ "copy", "language" or "" (fit to post)."""
    if copied(answer, lines):
        return "copy"
    if wrong_language(answer, lang):
        return "language"
    return ""

"""`ask <sha|#PR> <question>` — a question about one commit of the conversation's repositories;
the answer streams into a new thread under the question (the questions family, bot/conversation/questions.py,
finds the commit and answers).

`ask <question>` — a question that names no commit is about a period (this week, 上周, since
Monday, A..B; the last 7 days when it names none) of the conversation's repositories, or of the
one it names with `in owner/repo` (bot/conversation/period_questions.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...i18n import phrase
from ..grammar import CommandError
from .base import Command, Request

REF = re.compile(r"^(#\d{1,9}|[0-9a-fA-F]{4,40})$")


@dataclass(frozen=True)
class AskArgs:
    ref: str | None  # None: a question about a period
    question: str


def is_ref(word: str) -> bool:
    """A SHA or #PR — not an English word made of the letters a–f (`added`, `cafe`, `feed`): a
    SHA prefix that short and without a digit is rarely typed."""
    return bool(REF.match(word)) and (word.startswith("#") or len(word) >= 7 or any(c.isdigit() for c in word))


def parse(args: list[str]) -> AskArgs:
    if not args or (len(args) == 1 and is_ref(args[0])):
        raise CommandError(phrase("errors.ask_needs_ref"), "ask")
    if is_ref(args[0]):
        return AskArgs(args[0], " ".join(args[1:]))
    return AskArgs(None, " ".join(args))


async def run(req: Request, args: AskArgs) -> None:
    if args.ref is None:
        await req.tools.questions.period.ask(req.conv, req.platform, args.question, req.cfg, usage=False)
        return
    await req.tools.questions.ask(req.conv, req.platform, args.ref, args.question, req.cfg)


COMMAND = Command("ask", ("问", "提问"), parse, run)

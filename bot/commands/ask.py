"""`ask <sha|#PR> <question>` — a question about one commit of the conversation's repositories;
the answer streams into a new thread under the question (the questions family, bot/questions.py,
finds the commit and answers)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..i18n import phrase
from .base import Command, Request
from .grammar import CommandError

REF = re.compile(r"^(#\d{1,9}|[0-9a-fA-F]{4,40})$")


@dataclass(frozen=True)
class AskArgs:
    ref: str
    question: str


def parse(args: list[str]) -> AskArgs:
    if len(args) < 2:
        raise CommandError(phrase("errors.ask_needs_ref"), "ask")
    if not REF.match(args[0]):
        raise CommandError(phrase("errors.ask_bad_ref", value=args[0]), "ask")
    return AskArgs(args[0], " ".join(args[1:]))


async def run(req: Request, args: AskArgs) -> None:
    await req.chat.questions.ask(req.conv, req.platform, args.ref, args.question, req.cfg)


COMMAND = Command("ask", ("问", "提问"), parse, run)

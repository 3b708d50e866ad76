"""`help` — what the bot does and every command's usage, to the asker only."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Command, Request


@dataclass(frozen=True)
class HelpArgs:
    pass


def parse(args: list[str]) -> HelpArgs:
    return HelpArgs()  # `help subscribe` shows the whole help too: it is short


async def run(req: Request, args: HelpArgs) -> None:
    # the help lists every command, this one included: the table (commands/__init__.py) is
    # handed over with the tools rather than imported, which would make a circle
    await req.private(req.notice(req.tools.help_text(req.lang, req.prefix)))


COMMAND = Command("help", ("帮助", "?", "？"), parse, run)

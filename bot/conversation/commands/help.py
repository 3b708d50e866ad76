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
    from . import help_text  # the table lists this module: imported when it runs, not before

    await req.private(req.notice(help_text(req.lang, req.prefix)))


COMMAND = Command("help", ("帮助", "?", "？"), parse, run)

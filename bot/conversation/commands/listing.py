"""`list` — this conversation's subscriptions and settings, to the asker only."""

from __future__ import annotations

from dataclasses import dataclass

from ...i18n import phrase
from ..grammar import CommandError
from .base import Command, Request
from .describe import describe, line_key, settings_line


@dataclass(frozen=True)
class ListArgs:
    pass


def parse(args: list[str]) -> ListArgs:
    if args:
        raise CommandError(phrase("errors.list_no_args"), "list")
    return ListArgs()


async def run(req: Request, args: ListArgs) -> None:
    subs = await req.tools.subs.for_channel(req.conv.platform, req.conv.channel)
    lines = [req.say("notices.list_head")] if subs else [req.say("notices.list_none", prefix=req.prefix)]
    lines += [req.say(line_key(s, "list_item"), **describe(s, req.lang)) for s in subs]
    await req.private(req.notice("\n".join(lines + [settings_line(req.cfg)])))


COMMAND = Command("list", ("ls", "列表", "订阅列表"), parse, run)

"""`help` — what the bot does and every command's usage, to the asker only."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.platform_registry import by_name
from .base import Command, Request


@dataclass(frozen=True)
class HelpArgs:
    pass


def parse(args: list[str]) -> HelpArgs:
    return HelpArgs()  # `help subscribe` shows the whole help too: it is short


async def run(req: Request, args: HelpArgs) -> None:
    # the help lists every command, this one included: the table (commands/__init__.py) is
    # handed over with the tools rather than imported, which would make a circle
    shown = req.tools.help_text(req.lang, req.prefix) + "\n" + _who_changes(req)
    await req.private(req.notice(shown))


def _who_changes(req: Request) -> str:
    """Who may change this conversation's subscriptions, settings and owner mappings: said
    plainly, since with no admin list set it is anyone here."""
    if not req.tools.policy.admin_list(req.conv.platform):
        return req.say("help.who_anyone")
    entry = by_name(req.conv.platform)
    return req.say("help.who_admins", setting=entry.admins_setting if entry is not None else "")


COMMAND = Command("help", ("帮助", "?", "？"), parse, run)

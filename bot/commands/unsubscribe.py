"""`unsubscribe owner/repo` — stop a daily push (admins only when admins are configured)."""
from __future__ import annotations

from dataclasses import dataclass

from ..i18n import phrase
from .base import Command, Request
from .grammar import CommandError, repo_word


@dataclass(frozen=True)
class UnsubscribeArgs:
    repo: str


def parse(args: list[str]) -> UnsubscribeArgs:
    if len(args) != 1:
        raise CommandError(phrase("errors.unsubscribe_one_repo"), "unsubscribe")
    return UnsubscribeArgs(repo_word(args[0], "unsubscribe"))


async def run(req: Request, args: UnsubscribeArgs) -> None:
    req.chat.require_admin(req.conv)
    removed = await req.chat.subs.remove(req.conv.platform, req.conv.channel, args.repo)
    if removed:  # everyone sees the channel's pushes stop
        await req.reply(req.notice(req.say("notices.unsubscribed", repo=args.repo)))
    else:
        await req.private(req.notice(req.say("notices.not_subscribed", repo=args.repo)))


COMMAND = Command("unsubscribe", ("unsub", "退订", "取消订阅"), parse, run)

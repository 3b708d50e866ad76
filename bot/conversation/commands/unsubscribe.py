"""`unsubscribe owner/repo [daily|weekly]` — stop a push (admins only when admins are configured):
the daily one, the weekly roll-up, or without a word both."""

from __future__ import annotations

from dataclasses import dataclass

from ...channels.alerted import AlertLedger
from ...i18n import phrase
from ..grammar import CommandError, choice, repo_word
from .base import Command, Request


@dataclass(frozen=True)
class UnsubscribeArgs:
    repo: str
    cadence: str | None = None  # daily | weekly; None: both


def parse(args: list[str]) -> UnsubscribeArgs:
    if not 1 <= len(args) <= 2:
        raise CommandError(phrase("errors.unsubscribe_one_repo"), "unsubscribe")
    cadence = choice(args[1], ("daily", "weekly"), "unsubscribe", "unsubscribe") if len(args) == 2 else None
    return UnsubscribeArgs(repo_word(args[0], "unsubscribe"), cadence)


async def run(req: Request, args: UnsubscribeArgs) -> None:
    req.tools.policy.require_admin(req.conv)
    removed = False
    for weekly in {None: (False, True), "daily": (False,), "weekly": (True,)}[args.cadence]:
        removed |= await req.tools.subs.remove(req.conv.platform, req.conv.channel, args.repo, weekly=weekly)
    section = "week" if args.cadence == "weekly" else "notices"
    left = [
        s
        for s in await req.tools.subs.for_channel(req.conv.platform, req.conv.channel)
        if s.repo.lower() == args.repo.lower()
    ]
    if removed and not any(s.alerts == "high" for s in left):  # subscribed again later: alerts start from then
        await AlertLedger(req.tools.store).stop(req.conv.platform, req.conv.channel, args.repo)
    if removed:  # everyone sees the channel's pushes stop
        await req.reply(req.notice(req.say(f"{section}.unsubscribed", repo=args.repo)))
    else:
        await req.private(req.notice(req.say(f"{section}.not_subscribed", repo=args.repo)))


COMMAND = Command("unsubscribe", ("unsub", "退订", "取消订阅"), parse, run)

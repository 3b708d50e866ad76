"""`watches` — what the person who asks watches, to them only."""

from __future__ import annotations

from dataclasses import dataclass

from ...i18n import phrase
from ...watch.watch_store import Watches
from ..grammar import CommandError
from .base import Command, Request
from .watch_words import repo_name


@dataclass(frozen=True)
class WatchesArgs:
    pass


def parse(args: list[str]) -> WatchesArgs:
    if args:
        raise CommandError(phrase("watch.watches_no_args"), "watches")
    return WatchesArgs()


async def run(req: Request, args: WatchesArgs) -> None:
    mine = await Watches(req.tools.store).of(req.conv.platform, req.conv.user)
    if not mine:
        await req.private(req.notice(req.say("watch.list_none", prefix=req.prefix)))
        return
    lines = [req.say("watch.list_head")]
    lines += [
        req.say("watch.list_item", repo=repo_name(req.tools.sources, w.repo), glob=w.glob, at=w.at, tz=w.tz)
        for w in mine
    ]
    await req.private(req.notice("\n".join(lines)))


COMMAND = Command("watches", ("关注列表",), parse, run)

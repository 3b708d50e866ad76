"""`watch owner/repo GLOB [at 09:00] [tz ZONE]` — in a direct message with the bot: every day at
that time, a direct message with the analysis of each new commit of the day before that touches
GLOB (bot/watch/). The same repository and pattern again changes the time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.models import UsageError
from ...i18n import phrase
from ...watch.watch_store import MAX_WATCHES, Watch, Watches
from ..grammar import CommandError, options, repo_word, timezone
from .base import Command, Request
from .watch_words import glob_word

_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class WatchArgs:
    repo: str
    glob: str
    at: str | None = None
    tz: str | None = None


def parse(args: list[str]) -> WatchArgs:
    if not args:
        raise CommandError(phrase("watch.no_repo"), "watch")
    repo = repo_word(args[0], "watch")
    if len(args) < 2:
        raise CommandError(phrase("watch.no_glob", repo=repo), "watch")
    glob = glob_word(args[1], "watch")
    opts = options(args[2:], {"at": "HH:MM", "tz": phrase("errors.expect_zone")}, "watch")
    at = opts.get("at")
    if at is not None:
        m = _HHMM.match(at)
        if not m:
            raise CommandError(phrase("errors.bad_time", value=at), "watch")
        at = f"{int(m.group(1)):02d}:{m.group(2)}"
    return WatchArgs(repo, glob, at, timezone(opts["tz"], "watch") if "tz" in opts else None)


async def run(req: Request, args: WatchArgs) -> None:
    tools, conv, cfg = req.tools, req.conv, req.cfg
    channel = await req.platform.direct_channel(conv)
    if channel is None:  # its messages are personal: they need the person's own conversation
        raise UsageError(phrase("watch.dm_only", prefix=req.prefix))
    repo = tools.policy.check_repo(conv, args.repo)
    source = tools.sources.get(repo)
    await source.default_branch()  # validates the repository
    watches = Watches(tools.store)
    mine = await watches.of(conv.platform, conv.user)
    old = next((w for w in mine if w.repo.lower() == repo.lower() and w.glob == args.glob), None)
    if old is None and len(mine) >= MAX_WATCHES:
        raise UsageError(phrase("watch.too_many", n=MAX_WATCHES))
    watch = Watch(
        platform=conv.platform,
        user=conv.user,
        channel=channel,
        repo=repo,
        glob=args.glob,
        at=args.at or (old.at if old else "09:00"),
        tz=args.tz or (old.tz if old else cfg.tz),
        lang=cfg.lang,
    )
    await watches.upsert(watch)
    key = "watch.updated" if old else "watch.saved"
    await req.private(req.notice(req.say(key, repo=source.name, glob=watch.glob, at=watch.at, tz=watch.tz)))


COMMAND = Command("watch", ("关注",), parse, run)

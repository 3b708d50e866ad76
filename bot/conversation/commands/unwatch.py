"""`unwatch owner/repo [GLOB]` — stop watching a repository (every pattern, or just GLOB)."""

from __future__ import annotations

from dataclasses import dataclass

from ...i18n import phrase
from ...watch.watch_store import Watches
from ..grammar import CommandError, repo_word
from .base import Command, Request
from .watch_words import glob_word, repo_name


@dataclass(frozen=True)
class UnwatchArgs:
    repo: str
    glob: str | None = None


def parse(args: list[str]) -> UnwatchArgs:
    if not args or len(args) > 2:
        raise CommandError(phrase("watch.unwatch_words"), "unwatch")
    return UnwatchArgs(repo_word(args[0], "unwatch"), glob_word(args[1], "unwatch") if len(args) > 1 else None)


async def run(req: Request, args: UnwatchArgs) -> None:
    conv = req.conv
    repo = req.tools.policy.check_repo(conv, args.repo)
    gone = await Watches(req.tools.store).remove(conv.platform, conv.user, repo, args.glob)
    if gone:
        globs = ", ".join(f"`{w.glob}`" for w in gone)
        await req.private(req.notice(req.say("watch.removed", repo=repo_name(req.tools.sources, repo), globs=globs)))
    else:
        what = f"`{args.glob}`" if args.glob else req.say("watch.anything")
        await req.private(
            req.notice(
                req.say("watch.not_watching", repo=repo_name(req.tools.sources, repo), what=what, prefix=req.prefix)
            )
        )


COMMAND = Command("unwatch", ("取消关注",), parse, run)

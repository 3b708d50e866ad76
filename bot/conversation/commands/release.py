"""`release [TAG] [owner/repo …]` — the upgrade report of a release: the first-parent commits from
the tag before TAG to TAG (default: the newest tag), posted like `digest A..B`
(bot/sources/refrange.py, bot/render/upgrade.py). A word with a `/` names the repository, any
other word the tag; a repository without tags, or whose TAG is its first, is one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.models import Window
from ...i18n import phrase
from ...sources.refrange import release_window
from ..grammar import CommandError, repo_word
from .base import Command, Request
from .delivering import deliver
from .filters import FilterArgs, split_filters


@dataclass(frozen=True)
class ReleaseArgs:
    tag: str | None  # None: the newest tag
    repos: tuple[str, ...]
    filters: FilterArgs = FilterArgs()


def parse(args: list[str]) -> ReleaseArgs:
    args, filters = split_filters(args, "release")
    tags = [w for w in args if "/" not in w]
    repos = [repo_word(w, "release") for w in args if "/" in w]
    if len(tags) > 1 or len(repos) > 1:
        raise CommandError(phrase("errors.release_args"), "release")
    return ReleaseArgs(tags[0] if tags else None, tuple(repos), filters)


async def run(req: Request, args: ReleaseArgs) -> None:
    async def ranged(source, tz: str) -> Window:
        return await release_window(source, args.tag, tz)

    await deliver(req, args.repos, args.filters, week=False, window=_no_days, ranged=ranged)


def _no_days(tz: str) -> Window:
    raise AssertionError("a release has no days")  # never called: `ranged` gives the window


COMMAND = Command("release", ("发布",), parse, run)  # not "版本": questions start so

"""`digest [DATE|A..B|today|yesterday|昨天…] [owner/repo …] [paths GLOB…] [exclude GLOB…]
[authors NAME…] [exclude-authors NAME…] [bots show|collapse]` — a digest on demand, posted in the conversation like a scheduled one (a
"building…" line first, replaced by the digest). Without a repository: the channel's
subscriptions (with their filters), else the default repository. The verb is optional:
`/digest 2026-01-28 owner/repo` and `/digest 昨天` are digests too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.window import is_date_token, parse_window
from ...i18n import phrase
from ..grammar import CommandError, repo_word
from .base import Command, Request
from .delivering import deliver
from .filters import FilterArgs, split_filters


@dataclass(frozen=True)
class DigestArgs:
    when: str | None  # None: yesterday
    repos: tuple[str, ...]
    filters: FilterArgs = FilterArgs()


def parse(args: list[str]) -> DigestArgs:
    args, filters = split_filters(args, "digest")
    when = None
    repos: list[str] = []
    for word in args:
        if is_date_token(word):
            if when is not None:
                raise CommandError(phrase("errors.two_dates", first=when, second=word), "digest")
            when = word
        else:
            repos.append(repo_word(word, "digest"))
    return DigestArgs(when, tuple(dict.fromkeys(repos)), filters)


async def run(req: Request, args: DigestArgs) -> None:
    tools = req.tools
    await deliver(
        req,
        args.repos,
        args.filters,
        week=False,
        window=lambda tz: parse_window(args.when or "yesterday", tz, tools.clock(), tools.settings.max_range_days),
    )


COMMAND = Command("digest", ("日报", "摘要"), parse, run)

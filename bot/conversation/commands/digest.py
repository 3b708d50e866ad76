"""`digest [DATE|A..B|today|yesterday|昨天…|TAG..TAG] [owner/repo …] [paths GLOB…] [exclude GLOB…]
[authors NAME…] [exclude-authors NAME…] [bots show|collapse]` — a digest on demand, posted in the conversation like a scheduled one (a
"building…" line first, replaced by the digest). Without a repository: the channel's
subscriptions (with their filters), else the default repository. The verb is optional:
`/digest 2026-01-28 owner/repo` and `/digest 昨天` are digests too. A range of refs
(`/digest 0.11.8..0.11.9 owner/repo`: tags, branches or SHAs) is the upgrade report of its
first-parent commits (bot/sources/refrange.py, bot/render/upgrade.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.models import Window
from ...core.window import is_date_token, is_ref_range, parse_window, split_ref_range
from ...i18n import phrase
from ...sources.refrange import range_window
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
        if is_date_token(word) or is_ref_range(word):
            if when is not None:
                raise CommandError(phrase("errors.two_dates", first=when, second=word), "digest")
            when = word
        else:
            repos.append(repo_word(word, "digest"))
    return DigestArgs(when, tuple(dict.fromkeys(repos)), filters)


async def run(req: Request, args: DigestArgs) -> None:
    tools = req.tools
    if args.when and is_ref_range(args.when):  # `0.11.8..0.11.9`: a range of refs, an upgrade report
        spec = args.when
        split_ref_range(spec)  # a malformed range is one sentence before anything else

        async def ranged(source, tz: str) -> Window:
            return await range_window(source, spec, tz)

        await deliver(req, args.repos, args.filters, week=False, window=_no_days, ranged=ranged)
        return
    await deliver(
        req,
        args.repos,
        args.filters,
        week=False,
        window=lambda tz: parse_window(args.when or "yesterday", tz, tools.clock(), tools.settings.max_range_days),
    )


def _no_days(tz: str) -> Window:
    raise AssertionError("a range of refs has no days")  # never called: `ranged` gives the window


COMMAND = Command("digest", ("日报", "摘要"), parse, run)

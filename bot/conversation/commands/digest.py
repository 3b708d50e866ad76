"""`digest [DATE|A..B|today|yesterday|昨天…] [owner/repo …] [paths GLOB…] [exclude GLOB…]
[bots show|collapse]` — a digest on demand, posted in the conversation like a scheduled one (a
"building…" line first, replaced by the digest). Without a repository: the channel's
subscriptions (with their filters), else the default repository. The verb is optional:
`/digest 2026-01-28 owner/repo` and `/digest 昨天` are digests too.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ...core.current_job import CURRENT_JOB
from ...core.models import Subscription, Window
from ...core.window import is_date_token, parse_window
from ...delivery.spec import delivery_spec
from ...i18n import phrase
from ..grammar import CommandError, repo_word
from .base import Command, Request
from .filters import FilterArgs, split_filters
from .limits import check_request_size


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


async def deliver(
    req: Request, repos: tuple[str, ...], filters: FilterArgs, *, week: bool, window: Callable[[str], Window]
) -> None:
    """Deliver the digest (or the weekly roll-up) of each repository into this conversation: the
    named ones, else the channel's subscriptions — one per repository, the weekly one's settings
    for a roll-up and the daily one's for a digest — else the default repository. Options typed
    here win over the subscription's."""
    tools, conv, cfg = req.tools, req.conv, req.cfg
    targets = _one_per_repo(await tools.policy.channel_repos(conv, repos), week)
    # REQUEST_MAX_COMMITS, counted before anything is analysed or posted
    await check_request_size(req, targets, window, filters, named=bool(repos))
    request = CURRENT_JOB.get() or uuid.uuid4().hex
    for repo, sub in targets:
        tz = sub.tz if sub else cfg.tz
        span = window(tz)
        source = tools.sources.get(repo)
        branch = (sub.branch if sub else None) or await source.default_branch()  # validates the repo first
        spec = delivery_spec(
            sub,
            platform=conv.platform,
            channel=conv.channel,
            repo=repo,
            window=span,
            key=tools.store.k("ondemand", request, repo.lower()),
            lang=cfg.lang,
            paths=filters.paths,
            exclude=filters.exclude,
            bots=filters.bots,
            # on demand: the branch checked above, the asked kind, always a post, and no one
            # told directly of a fork's conflicts (the scheduled push does that once)
            branch=branch,
            week=week,
            post_empty=True,
            owner=None,
            attach=cfg.file,
            progress=True,
            prefix=req.prefix,
        )
        await tools.deliveries.run(spec)


def _one_per_repo(targets: list[tuple[str, Subscription | None]], week: bool) -> list[tuple[str, Subscription | None]]:
    chosen: dict[str, tuple[str, Subscription | None]] = {}
    for repo, sub in targets:
        held = chosen.get(repo.lower())
        if held is None or (held[1] is not None and sub is not None and held[1].weekly != week and sub.weekly == week):
            chosen[repo.lower()] = (repo, sub)
    return list(chosen.values())


COMMAND = Command("digest", ("日报", "摘要"), parse, run)

"""A digest (or a weekly roll-up) on demand into the conversation, for `digest` and `week`: the
targets (named repositories, else the channel's subscriptions, else the default), one delivery
each through the one subscription → delivery mapping (bot/delivery/spec.py), and before any of it
REQUEST_MAX_COMMITS: the most commits one on-demand `digest` (or `week`) in a chat may analyse.

Counted before anything is analysed or posted (listing a window's commits is cheap: git, or one
GitHub request per hundred commits; with `paths`/`exclude`, the files of the listed commits are
read too, from the cache the digest then uses; `authors`/`exclude-authors` count only the commits
they keep), for every repository the request covers; a
request over the limit is refused whole with one sentence: how many commits, the limit, and a
narrower command — the longest run of the window's last days that fits (for a range of refs, its
newest REQUEST_MAX_COMMITS commits as a range ending where it ends). Scheduled pushes,
watches and the CLI are not bounded (the month's LLM budget caps those).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from ...core.current_job import CURRENT_JOB
from ...core.models import BotError, Subscription, UsageError, Window
from ...core.window import zone
from ...delivery.spec import author_filter_of, delivery_spec, path_filter_of
from ...digest.authorfilter import as_typed
from ...digest.pathfilter import PathFilter, touched_paths
from ...i18n import phrase
from ...sources.refrange import narrower
from .base import Request
from .filters import FilterArgs

# A range of refs is resolved in each repository's source (bot/sources/refrange.py): (source, tz) → Window
Ranged = Callable[[Any, str], Awaitable[Window]]


async def check_request_size(
    req: Request,
    targets: list[tuple[str, Subscription | None]],
    window: Callable[[str], Window],
    filters: FilterArgs,
    *,
    named: bool,
    ranged: Ranged | None = None,
) -> None:
    """Raise the one sentence when a target's window holds more than REQUEST_MAX_COMMITS commits
    (after its author and path filters). `named`: the request named its repositories, so the suggestion
    names them too (else the channel's subscriptions, or the default repository, apply again)."""
    tools = req.tools
    limit = tools.settings.request_max_commits
    for repo, sub in targets:
        tz = sub.tz if sub else req.cfg.tz
        source = tools.sources.get(repo)
        span = await ranged(source, tz) if ranged else window(tz)
        branch = (sub.branch if sub else None) or await source.default_branch()
        commits = await source.list_commits(span, branch, tools.settings.include_merges)
        filt = path_filter_of(sub, filters.paths, filters.exclude)
        by = author_filter_of(sub, filters.authors, filters.exclude_authors)
        if by:  # the author is in the listing: nothing to read
            commits = [c for c in commits if by.keeps(c.author, c.login)]
        if len(commits) > limit and filt:
            commits = await _kept(tools.builder, source, commits, filt)
        if len(commits) <= limit:
            continue
        if span.is_range:  # the newest `limit` commits of the range, as a range ending where it ends
            _refuse_range(req, span, commits, limit, source.name, [repo] if named else [], filters)
        per_day = Counter(c.local_time(tz).date() for c in commits)
        first = span.start.astimezone(zone(tz)).date()
        last = (span.end.astimezone(zone(tz)) - timedelta(days=1)).date()
        day, fits = last, 0
        while day >= first and fits + per_day[day] <= limit:
            fits += per_day[day]
            day -= timedelta(days=1)
        start = day + timedelta(days=1)
        if start > last:  # even the last day alone is over the limit
            raise UsageError(
                phrase(
                    "cost.too_many_day",
                    label=span.label,
                    n=f"{len(commits):,}",
                    repo=source.name,
                    limit=f"{limit:,}",
                    prefix=req.prefix,
                )
            )
        label = start.isoformat() if start == last else f"{start.isoformat()}..{last.isoformat()}"
        words = [req.prefix, label] + ([repo] if named else []) + _filter_words(filters)
        raise UsageError(
            phrase(
                "cost.too_many",
                label=span.label,
                n=f"{len(commits):,}",
                repo=source.name,
                limit=f"{limit:,}",
                suggestion=" ".join(words),
                fits=f"{fits:,}",
            )
        )


def _refuse_range(req: Request, span: Window, commits: list, limit: int, name: str, repo: list[str], filters) -> None:
    """The one sentence for a range over the limit, naming a narrower range: its newest `limit` commits."""
    words = [req.prefix, narrower(commits, limit, span.label)] + repo + _filter_words(filters)
    raise UsageError(
        phrase(
            "cost.too_many",
            label=span.label,
            n=f"{len(commits):,}",
            repo=name,
            limit=f"{limit:,}",
            suggestion=" ".join(words),
            fits=f"{limit:,}",
        )
    )


async def _kept(builder, source, commits, filt: PathFilter) -> list:
    """The commits the path filter keeps (a commit whose files cannot be read is kept, as the
    digest keeps it)."""
    slots = asyncio.Semaphore(builder.settings.analysis_concurrency)

    async def keep(commit) -> bool:
        async with slots:
            try:
                files = await builder.files(source, commit.sha)
            except BotError:
                return True
        return filt.keeps(touched_paths(files))

    kept = await asyncio.gather(*(keep(c) for c in commits))
    return [c for c, k in zip(commits, kept) if k]


def _filter_words(filters: FilterArgs) -> list[str]:
    """The noise options as typed, for the suggested command."""
    words: list[str] = []
    if filters.paths:
        words += ["paths", *filters.paths]
    if filters.exclude:
        words += ["exclude", *filters.exclude]
    if filters.bots:
        words += ["bots", filters.bots]
    for option, names in (("authors", filters.authors), ("exclude-authors", filters.exclude_authors)):
        if names:
            words += [option, *as_typed(names)]
    return words


async def deliver(
    req: Request,
    repos: tuple[str, ...],
    filters: FilterArgs,
    *,
    week: bool,
    window: Callable[[str], Window],
    ranged: Ranged | None = None,
) -> None:
    """Deliver the digest (or the weekly roll-up) of each repository into this conversation: the
    named ones, else the channel's subscriptions — one per repository, the weekly one's settings
    for a roll-up and the daily one's for a digest — else the default repository. Options typed
    here win over the subscription's."""
    tools, conv, cfg = req.tools, req.conv, req.cfg
    targets = _one_per_repo(await tools.policy.channel_repos(conv, repos), week)
    # REQUEST_MAX_COMMITS, counted before anything is analysed or posted
    await check_request_size(req, targets, window, filters, named=bool(repos), ranged=ranged)
    request = CURRENT_JOB.get() or uuid.uuid4().hex
    # A range names what an upgrade means for the channel's fork of that repository, named or not.
    forks = await _channel_forks(req) if ranged else {}
    for repo, sub in targets:
        tz = sub.tz if sub else cfg.tz
        source = tools.sources.get(repo)
        span = await ranged(source, tz) if ranged else window(tz)
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
            authors=filters.authors,
            exclude_authors=filters.exclude_authors,
            # on demand: the branch checked above, the asked kind, always a post, and no one
            # told directly of a fork's conflicts (the scheduled push does that once)
            branch=branch,
            week=week,
            post_empty=True,
            owner=None,
            attach=cfg.file,
            progress=True,
            prefix=req.prefix,
            **({"fork": forks[repo.lower()]} if sub is None and repo.lower() in forks else {}),
        )
        await tools.deliveries.run(spec)


async def _channel_forks(req: Request) -> dict[str, str]:
    """repository (lower case) → the fork its subscription in this conversation names."""
    subs = await req.tools.subs.for_channel(req.conv.platform, req.conv.channel)
    return {s.repo.lower(): s.fork for s in subs if s.fork}


def _one_per_repo(targets: list[tuple[str, Subscription | None]], week: bool) -> list[tuple[str, Subscription | None]]:
    chosen: dict[str, tuple[str, Subscription | None]] = {}
    for repo, sub in targets:
        held = chosen.get(repo.lower())
        if held is None or (held[1] is not None and sub is not None and held[1].weekly != week and sub.weekly == week):
            chosen[repo.lower()] = (repo, sub)
    return list(chosen.values())

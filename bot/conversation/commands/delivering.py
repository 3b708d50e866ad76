"""A digest (or a weekly roll-up) on demand into the conversation, for `digest` and `week`: the
targets (named repositories, else the channel's subscriptions, else the default repository), one
delivery each through the one subscription → delivery mapping (bot/delivery/spec.py), and before
any of it the request's size (bot/delivery/size.py).

REQUEST_MAX_COMMITS bounds the commits an on-demand `digest` must still analyse (after its
filters; cached analyses are free), for every repository the request covers. A request over it
is refused whole, before anything is analysed or posted, with one sentence: how many, the limit,
and commands the bot accepts — the longest run of the window's last days that fits (for a range
of refs, its newest commits that fit, as a range ending where it ends), and the weekly roll-up
of the window's last week when that fits ROLLUP_MAX_COMMITS.

A weekly roll-up is one message whatever the week's size: over REQUEST_MAX_COMMITS it is not
refused but queued like any request and built (its building line says how many commits it
analyses, its progress line counts them; every analysis is cached as it is made, so a run cut
short resumes where it stopped). Only a week over ROLLUP_MAX_COMMITS still to analyse is refused.
Scheduled pushes, watches and the CLI are not bounded (the month's LLM budget caps those).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from typing import Any

from ...core.current_job import CURRENT_JOB
from ...core.models import Commit, UsageError, Window
from ...core.window import week_window, zone
from ...delivery.size import Asked, Target, one_per_repo, to_analyse
from ...delivery.spec import delivery_spec
from ...i18n import phrase
from ...sources.branches import is_several
from ...sources.branches import resolve as resolve_branches
from ...sources.refrange import narrower
from .base import Request
from .filters import FilterArgs

# A range of refs is resolved in each repository's source (bot/sources/refrange.py): (source, tz) → Window
Ranged = Callable[[Any, str], Awaitable[Window]]


def asked_of(repos: tuple[str, ...], filters: FilterArgs) -> Asked:
    """What the request typed besides its window, as a suggestion repeats it."""
    return Asked(
        repos=repos,
        paths=filters.paths,
        exclude=filters.exclude,
        bots=filters.bots,
        authors=filters.authors,
        exclude_authors=filters.exclude_authors,
        branch=filters.branch,
    )


async def branch_of(source, sub, asked: str | None) -> str:
    """The branch set a delivery follows: typed (`branch main release/*`), else the subscription's,
    else the default branch. Several are matched now, so a pattern matching no branch (or too
    many) is one sentence before anything is queued."""
    spec = asked or (sub.branch if sub else None) or await source.default_branch()
    if is_several(spec):
        await resolve_branches(source, spec)
    return spec


async def check_request_size(
    req: Request,
    targets: list[Target],
    window: Callable[[str], Window],
    asked: Asked,
    *,
    ranged: Ranged | None = None,
    week: bool = False,
) -> dict[str, int]:
    """Raise the one sentence when a target's window holds more commits still to analyse than
    the request may (module doc). Returns, for a roll-up accepted over REQUEST_MAX_COMMITS,
    repository (lower case) → how many it analyses."""
    tools = req.tools
    settings = tools.settings
    limit = settings.request_max_commits
    big: dict[str, int] = {}
    for repo, sub in targets:
        tz = sub.tz if sub else req.cfg.tz
        source = tools.sources.get(repo)
        span = await ranged(source, tz) if ranged else window(tz)
        branch = await branch_of(source, sub, asked.branch)
        lang = sub.lang if sub else req.cfg.lang
        fresh, cached = await to_analyse(
            tools.builder, source, span, branch, lang, sub, asked, settings.include_merges, limit
        )
        if len(fresh) <= limit:
            continue
        said = dict(label=span.label, n=f"{len(fresh):,}", repo=source.name, cached=_cached(req, cached))
        if week:
            if len(fresh) <= settings.rollup_max_commits:
                big[repo.lower()] = len(fresh)
                continue
            raise UsageError(phrase("cost.too_many_rollup", limit=f"{settings.rollup_max_commits:,}", **said))
        if span.is_range:  # the newest commits that fit, as a range ending where the asked one ends
            listed = await source.list_commits(span, branch, settings.include_merges)  # newest first
            k, fits = _newest_fitting(listed, fresh, limit)
            words = [req.prefix, narrower(listed, k, span.label), *asked.words()]
            raise UsageError(
                phrase(
                    "cost.too_many", limit=f"{limit:,}", suggestion=" ".join(words), fits=f"{fits:,}", week="", **said
                )
            )
        await _refuse_days(req, span, fresh, asked, said, limit)
    return big


async def _refuse_days(req: Request, span: Window, fresh: list[Commit], asked: Asked, said: dict, limit: int) -> None:
    """The sentence for a window of days over the limit: the longest run of its last days that
    fits, and its last week's roll-up when the bot would accept it."""
    tz = span.tz
    per_day = Counter(c.local_time(tz).date() for c in fresh)
    first = span.start.astimezone(zone(tz)).date()
    last = (span.end.astimezone(zone(tz)) - timedelta(days=1)).date()
    day, fits = last, 0
    while day >= first and fits + per_day[day] <= limit:
        fits += per_day[day]
        day -= timedelta(days=1)
    start = day + timedelta(days=1)
    rollup = await _rollup_suggestion(req, last, asked)
    if start > last:  # even the last day alone is over the limit
        instead = (
            phrase("cost.week_instead", command=rollup)
            if rollup
            else phrase("cost.raise_limit", setting="REQUEST_MAX_COMMITS")
        )
        raise UsageError(phrase("cost.too_many_day", limit=f"{limit:,}", instead=instead, **said))
    label = start.isoformat() if start == last else f"{start.isoformat()}..{last.isoformat()}"
    suggestion = " ".join([req.prefix, label, *asked.words()])
    if rollup and first == last - timedelta(days=last.weekday()):  # a whole week asked: its roll-up first
        raise UsageError(
            phrase(
                "cost.too_many_week", limit=f"{limit:,}", week=rollup, suggestion=suggestion, fits=f"{fits:,}", **said
            )
        )
    clause = phrase("cost.or_week", command=rollup) if rollup else ""
    raise UsageError(
        phrase("cost.too_many", limit=f"{limit:,}", suggestion=suggestion, fits=f"{fits:,}", week=clause, **said)
    )


async def _rollup_suggestion(req: Request, day: date, asked: Asked) -> str:
    """`week DAY` with the request's repositories and filters, when the bot would accept it (the
    week's commits still to analyse within ROLLUP_MAX_COMMITS for every repository it covers),
    else ''. Counted as `week` will count it: its targets, its windows."""
    tools = req.tools
    settings = tools.settings
    now = tools.clock()
    targets = one_per_repo(await tools.policy.channel_repos(req.conv, asked.repos), week=True)
    for repo, sub in targets:
        tz = sub.tz if sub else req.cfg.tz
        today = now.astimezone(zone(tz)).date()
        source = tools.sources.get(repo)
        branch = await branch_of(source, sub, asked.branch)
        fresh, _ = await to_analyse(
            tools.builder,
            source,
            week_window(min(day, today), tz, today),
            branch,
            sub.lang if sub else req.cfg.lang,
            sub,
            asked,
            settings.include_merges,
            settings.rollup_max_commits,
        )
        if len(fresh) > settings.rollup_max_commits:
            return ""
    return f"{req.prefix} {req.say('cost.week_verb')} {day.isoformat()}{asked.again()}"


def _cached(req: Request, cached: bool) -> str:
    return req.say("cost.not_yet_analysed") if cached else ""


def _newest_fitting(listed: list[Commit], fresh: list[Commit], limit: int) -> tuple[int, int]:
    """(how many of the range's newest commits hold at most `limit` still to analyse, how many
    of those they hold)."""
    todo = {c.sha for c in fresh}
    n = count = 0
    for c in listed:
        if c.sha in todo:
            if count == limit:
                break
            count += 1
        n += 1
    return n, count


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
    targets = one_per_repo(await tools.policy.channel_repos(conv, repos), week)
    asked = asked_of(repos, filters)
    # REQUEST_MAX_COMMITS (ROLLUP_MAX_COMMITS), counted before anything is analysed or posted
    big = await check_request_size(req, targets, window, asked, ranged=ranged, week=week)
    request = CURRENT_JOB.get() or uuid.uuid4().hex
    # A range names what an upgrade means for the channel's fork of that repository, named or not.
    forks = await _channel_forks(req) if ranged else {}
    for repo, sub in targets:
        tz = sub.tz if sub else cfg.tz
        source = tools.sources.get(repo)
        span = await ranged(source, tz) if ranged else window(tz)
        branch = await branch_of(source, sub, filters.branch)  # validates the repo (and the branches) first
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
            asked=asked.to_dict(),
            analyse=big.get(repo.lower(), 0),
            **({"fork": forks[repo.lower()]} if sub is None and repo.lower() in forks else {}),
        )
        await tools.deliveries.run(spec)


async def _channel_forks(req: Request) -> dict[str, str]:
    """repository (lower case) → the fork its subscription in this conversation names."""
    subs = await req.tools.subs.for_channel(req.conv.platform, req.conv.channel)
    return {s.repo.lower(): s.fork for s in subs if s.fork}

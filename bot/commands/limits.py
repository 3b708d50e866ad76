"""REQUEST_MAX_COMMITS: the most commits one on-demand `digest` in a chat may analyse.

Counted before anything is analysed or posted (listing a window's commits is cheap: git, or one
GitHub request per hundred commits), for every repository the request names; a request over the
limit is refused whole with one sentence: how many commits, the limit, and a narrower command —
the longest run of the range's last days that fits. Scheduled pushes and the CLI are not bounded
(the month's LLM budget caps those).
"""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

from ..i18n import phrase
from ..models import Subscription, UsageError
from ..window import parse_window, zone
from .base import Request


async def check_request_size(req: Request, targets: list[tuple[str, Subscription | None]], when: str | None,
                             named: bool) -> None:
    """Raise the one sentence when a target's window holds more than REQUEST_MAX_COMMITS commits.
    `named`: the request named its repositories (the suggestion names them too; the default
    repository, asked for by naming none, is not named)."""
    chat = req.chat
    limit = chat.settings.request_max_commits
    for repo, sub in targets:
        tz = sub.tz if sub else req.cfg.tz
        window = parse_window(when or "yesterday", tz, chat.clock(), chat.settings.max_range_days)
        source = chat.services.source(repo)
        branch = (sub.branch if sub else None) or await source.default_branch()
        commits = await source.list_commits(window, branch, chat.settings.include_merges)
        if len(commits) <= limit:
            continue
        per_day = Counter(c.local_time(tz).date() for c in commits)
        first = window.start.astimezone(zone(tz)).date()
        last = (window.end.astimezone(zone(tz)) - timedelta(days=1)).date()
        day, fits = last, 0
        while day >= first and fits + per_day[day] <= limit:
            fits += per_day[day]
            day -= timedelta(days=1)
        start = day + timedelta(days=1)
        if start > last:  # even the last day alone is over the limit
            raise UsageError(phrase("cost.too_many_day", label=window.label, n=f"{len(commits):,}", repo=source.name,
                                    limit=f"{limit:,}", prefix=req.prefix))
        label = start.isoformat() if start == last else f"{start.isoformat()}..{last.isoformat()}"
        raise UsageError(phrase("cost.too_many", label=window.label, n=f"{len(commits):,}", repo=source.name,
                                limit=f"{limit:,}", suggestion=f"{req.prefix} {label}" + (f" {repo}" if named or sub else ""),
                                fits=f"{fits:,}"))

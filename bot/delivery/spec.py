"""What one delivery is, as JSON a job queue can carry: where a digest goes, for which window, in
which language, filtered how — and the one mapping from a subscription (or the channel's
settings, on demand) to it. Kept apart from the machinery that runs deliveries
(runner.py), so that commands, the clock and the composition root name a delivery without
depending on how it is run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol

from ..core.models import Subscription, Window, to_dict, window_from_dict
from ..core.window import day_window, week_window
from ..digest.authorfilter import AuthorFilter
from ..digest.pathfilter import PathFilter

# How long a delivery's ledger and progress are kept, how often a scheduled push is tried, and how
# soon a job interrupted by a Redis outage runs again (watches share them: bot/watch/runner.py).
LEDGER_TTL = 40 * 86400
MAX_ATTEMPTS = 3
STORE_RETRY = 2.0


@dataclass(frozen=True)
class DeliverySpec:
    platform: str
    channel: str
    repo: str  # as commands name it (owner/name or the default path)
    window: dict  # a Window as JSON
    lang: str
    key: str  # progress state and idempotency keys derive from it
    branch: str | None = None
    min_importance: str = "low"
    attach: bool = False
    post_empty: bool = True
    thread: str | None = None  # the parent goes into this thread (a command typed in a thread)
    progress: bool = False  # on demand: "building…" first, replaced by the digest
    ledger: str | None = None  # scheduled: the (conversation, repository, day) ledger key
    attempts: str | None = None  # scheduled: failed attempts so far
    paths: tuple[str, ...] = ()  # the path filter (bot/digest/pathfilter.py)
    exclude: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()  # the author filter (bot/digest/authorfilter.py)
    exclude_authors: tuple[str, ...] = ()
    bots: str = "collapse"  # collapse | show (bot/digest/noise.py)
    week: bool = False  # the weekly roll-up (bot/digest/rollup.py) instead of the digest and its thread
    fork: str | None = None  # the subscription's fork: the digest says what each commit means for it
    owner: str | None = None  # who named the fork: told directly of each conflicting commit
    prefix: str = ""  # on demand: how the asker types commands (`/digest`), for what to try next
    asked: dict | None = None  # on demand: what was typed besides the window (bot/delivery/size.py's Asked)
    analyse: int = (
        0  # on demand: a roll-up's commits still to analyse, past REQUEST_MAX_COMMITS (its building line says so)
    )

    def window_obj(self) -> Window:
        return window_from_dict(self.window)

    def path_filter(self) -> PathFilter:
        return PathFilter(tuple(self.paths), tuple(self.exclude))

    def author_filter(self) -> AuthorFilter:
        return AuthorFilter(tuple(self.authors), tuple(self.exclude_authors))

    @classmethod
    def from_dict(cls, d: dict) -> DeliverySpec:
        values = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        for name in ("paths", "exclude", "authors", "exclude_authors"):  # JSON lists back to the tuples they were
            if name in values:
                values[name] = tuple(values[name] or ())
        return cls(**values)


def path_filter_of(
    sub: Subscription | None, paths: tuple[str, ...] | None = None, exclude: tuple[str, ...] | None = None
) -> PathFilter:
    """The path filter a delivery applies: what was typed with the command, else the subscription's."""
    return PathFilter(
        paths if paths is not None else (sub.paths if sub else ()),
        exclude if exclude is not None else (sub.exclude if sub else ()),
    )


def author_filter_of(
    sub: Subscription | None, authors: tuple[str, ...] | None = None, exclude: tuple[str, ...] | None = None
) -> AuthorFilter:
    """The author filter a delivery applies: what was typed with the command, else the subscription's."""
    return AuthorFilter(
        authors if authors is not None else (sub.authors if sub else ()),
        exclude if exclude is not None else (sub.exclude_authors if sub else ()),
    )


def delivery_spec(
    sub: Subscription | None,
    *,
    platform: str,
    channel: str,
    repo: str,
    window: Window,
    key: str,
    lang: str,
    paths: tuple[str, ...] | None = None,
    exclude: tuple[str, ...] | None = None,
    bots: str | None = None,
    authors: tuple[str, ...] | None = None,
    exclude_authors: tuple[str, ...] | None = None,
    **more,
) -> DeliverySpec:
    """The one mapping from a subscription (or none: the channel's settings) to what its delivery
    needs. Filters typed with a command (`paths`, `exclude`, `bots`, `authors`, `exclude_authors`)
    win over the subscription's;
    `more` sets what only some deliveries have (a ledger, progress, the asker's prefix…)."""
    filt = path_filter_of(sub, paths, exclude)
    by = author_filter_of(sub, authors, exclude_authors)
    values: dict = dict(
        platform=platform,
        channel=channel,
        repo=repo,
        window=to_dict(window),
        lang=sub.lang if sub else lang,
        key=key,
        paths=filt.paths,
        exclude=filt.exclude,
        authors=by.authors,
        exclude_authors=by.exclude,
        bots=bots or (sub.bots if sub else "collapse"),
    )
    if sub is not None:
        values.update(
            branch=sub.branch,
            min_importance=sub.min_importance.value,
            post_empty=sub.post_empty,
            week=sub.weekly,
            fork=sub.fork,
            owner=sub.owner or None,
        )
    values.update(more)
    return DeliverySpec(**values)


def scheduled_spec(store, sub: Subscription, day: date) -> DeliverySpec:
    """The push of `day` (a weekly subscription: of the ISO week whose Monday is `day`), keyed by
    (conversation, repository, day or week) — one ledger entry each, so it is made once."""
    if sub.weekly:
        year, week, _ = day.isocalendar()
        parts = (sub.platform, sub.channel, sub.repo.lower(), f"week-{year}-W{week:02d}")
        window = week_window(day, sub.tz)
    else:
        parts = (sub.platform, sub.channel, sub.repo.lower(), day.isoformat())
        window = day_window(day, sub.tz)
    return delivery_spec(
        sub,
        platform=sub.platform,
        channel=sub.channel,
        repo=sub.repo,
        window=window,
        key=store.k("delivery", *parts),
        lang=sub.lang,
        ledger=store.k("ledger", *parts),
        attempts=store.k("attempts", *parts),
    )


class DeliveryRunner(Protocol):
    """What runs a delivery (runner.py's Deliveries), as the commands and the clock name it."""

    async def run(self, spec: DeliverySpec) -> str: ...

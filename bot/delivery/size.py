"""How much an on-demand delivery would analyse: what REQUEST_MAX_COMMITS and ROLLUP_MAX_COMMITS
bound, counted before anything is analysed or posted, the same way wherever a command is
refused or suggested (bot/conversation/commands/delivering.py, and the quiet day's hint in
runner.py) — so that every command the bot suggests is one it accepts.

What is counted is the commits still to analyse: those of the window, after the delivery's
author and path filters, whose analysis the cache holds in no language (a day other digests
already analysed costs nothing, however many commits it has; a language missing beside another
costs a translation, bot/analysis/translate.py). Listing is cheap (git, or one GitHub request
per hundred commits), the cache is one Redis round trip, and the path filter reads the files of
the commits still to analyse only, from the cache the digest then uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.models import BotError, Commit, Subscription, Window
from ..digest.authorfilter import AuthorFilter, as_typed
from ..digest.pathfilter import PathFilter, touched_paths
from ..sources.branches import list_followed, patterns_of
from .spec import author_filter_of, path_filter_of

Target = tuple[str, Subscription | None]  # a repository a request covers, and its subscription here


@dataclass(frozen=True)
class Asked:
    """What an on-demand request typed besides its window: the repositories it named, and its
    filters (None: not typed, the subscription's apply). A suggestion repeats them, so that it
    covers the same repositories with the same filters."""

    repos: tuple[str, ...] = ()
    paths: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    bots: str | None = None
    authors: tuple[str, ...] | None = None
    exclude_authors: tuple[str, ...] | None = None
    branch: str | None = None  # `branch main release/*` as kept (bot/sources/branches.py); None: not typed

    def words(self) -> list[str]:
        """The repositories and filters as typed, for a suggested command."""
        words = list(self.repos)
        if self.paths:
            words += ["paths", *self.paths]
        if self.exclude:
            words += ["exclude", *self.exclude]
        if self.bots:
            words += ["bots", self.bots]
        for option, names in (("authors", self.authors), ("exclude-authors", self.exclude_authors)):
            if names:
                words += [option, *as_typed(names)]
        if self.branch:
            words += ["branch", *patterns_of(self.branch)]
        return words

    def again(self) -> str:
        """The words after a suggested command's window: '' or ' ' + the words."""
        words = self.words()
        return " " + " ".join(words) if words else ""

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: dict | None) -> Asked:
        values = dict(data or {})
        for name in ("repos", "paths", "exclude", "authors", "exclude_authors"):
            if values.get(name) is not None:
                values[name] = tuple(values[name])
        return cls(**{k: v for k, v in values.items() if k in cls.__dataclass_fields__})


def one_per_repo(targets: Sequence[Target], week: bool) -> list[Target]:
    """One delivery per repository: of a channel's two subscriptions to one repository, the
    weekly one's settings for a roll-up and the daily one's for a digest."""
    chosen: dict[str, Target] = {}
    for repo, sub in targets:
        held = chosen.get(repo.lower())
        if held is None or (held[1] is not None and sub is not None and held[1].weekly != week and sub.weekly == week):
            chosen[repo.lower()] = (repo, sub)
    return list(chosen.values())


async def to_analyse(
    builder,
    source,
    span: Window,
    branch: str,
    lang: str,
    sub: Subscription | None,
    asked: Asked,
    include_merges: bool,
    limit: int,
) -> tuple[list[Commit], bool]:
    """(the delivery's commits still to analyse, whether the cache held others). Exact only over
    `limit`: a request that fits is not slowed down by counting (every listed commit is
    returned, as if none were analysed)."""
    commits = (await list_followed(source, span, branch, include_merges, backports=False)).commits
    by: AuthorFilter = author_filter_of(sub, asked.authors, asked.exclude_authors)
    if by:  # the author is in the listing: nothing to read
        commits = [c for c in commits if by.keeps(c.author, c.login)]
    if len(commits) <= limit:
        return commits, False
    fresh = await builder.uncached(source, commits, lang)
    cached = len(fresh) < len(commits)
    filt = path_filter_of(sub, asked.paths, asked.exclude)
    if len(fresh) > limit and filt:
        fresh = await kept_by(builder, source, fresh, filt)
    return fresh, cached


async def kept_by(builder, source, commits: Sequence[Commit], filt: PathFilter) -> list[Commit]:
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

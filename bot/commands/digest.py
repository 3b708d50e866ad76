"""`digest [DATE|A..B|today|yesterday|昨天…] [owner/repo …]` — a digest on demand, posted in the
conversation like a scheduled one (a "building…" line first, replaced by the digest). Without a
repository: the channel's subscriptions, else the default repository. The verb is optional:
`/digest 2026-01-28 owner/repo` and `/digest 昨天` are digests too.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from ..current_job import CURRENT_JOB
from ..delivery.job import DeliverySpec
from ..i18n import phrase
from ..models import to_dict
from ..window import is_date_token, parse_window
from .base import Command, Request
from .grammar import CommandError, repo_word


@dataclass(frozen=True)
class DigestArgs:
    when: str | None  # None: yesterday
    repos: tuple[str, ...]


def parse(args: list[str]) -> DigestArgs:
    when = None
    repos: list[str] = []
    for word in args:
        if is_date_token(word):
            if when is not None:
                raise CommandError(phrase("errors.two_dates", first=when, second=word), "digest")
            when = word
        else:
            repos.append(repo_word(word, "digest"))
    return DigestArgs(when, tuple(dict.fromkeys(repos)))


async def run(req: Request, args: DigestArgs) -> None:
    chat, conv, cfg = req.chat, req.conv, req.cfg
    targets = await chat.channel_repos(conv, args.repos)
    request = CURRENT_JOB.get() or uuid.uuid4().hex
    for repo, sub in targets:
        tz = sub.tz if sub else cfg.tz
        window = parse_window(args.when or "yesterday", tz, chat.clock(), chat.settings.max_range_days)
        source = chat.services.source(repo)
        branch = (sub.branch if sub else None) or await source.default_branch()  # validates the repo first
        spec = DeliverySpec(platform=conv.platform, channel=conv.channel, repo=repo, window=to_dict(window),
                            lang=sub.lang if sub else cfg.lang, key=chat.store.k("ondemand", request, repo.lower()),
                            branch=branch, min_importance=sub.min_importance.value if sub else "low",
                            attach=cfg.file, progress=True)
        await chat.deliveries.run(spec)


COMMAND = Command("digest", ("日报", "摘要"), parse, run)

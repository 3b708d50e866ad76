"""`subscribe owner/repo [at 09:30] [tz ZONE] [lang zh|en] [min high|medium|low] [branch B]
[empty post|skip]` — a daily push of the previous day's digest into this conversation (admins
only when admins are configured). Subscribing again updates the options named.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..i18n import phrase, text
from ..models import Importance, Subscription
from ..platform import Notice
from ..window import parse_window
from .base import Command, Request
from .grammar import CommandError, choice, options, repo_word, timezone

_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_BRANCH = re.compile(r"^(?!-)[A-Za-z0-9._/\-]{1,200}$")


@dataclass(frozen=True)
class SubscribeArgs:
    repo: str
    at: str | None = None
    tz: str | None = None
    lang: str | None = None
    min_importance: str | None = None
    branch: str | None = None
    post_empty: bool | None = None


def parse(args: list[str]) -> SubscribeArgs:
    if not args:
        raise CommandError(phrase("errors.subscribe_no_repo"), "subscribe")
    repo = repo_word(args[0], "subscribe")
    opts = options(args[1:], {"at": "HH:MM", "tz": phrase("errors.expect_zone"), "lang": "zh|en",
                              "min": "high|medium|low", "branch": phrase("errors.expect_branch"),
                              "empty": "post|skip"}, "subscribe")
    at = opts.get("at")
    if at is not None:
        m = _HHMM.match(at)
        if not m:
            raise CommandError(phrase("errors.bad_time", value=at), "subscribe")
        at = f"{int(m.group(1)):02d}:{m.group(2)}"
    branch = opts.get("branch")
    if branch is not None and not _BRANCH.match(branch):
        raise CommandError(phrase("errors.bad_branch", value=branch), "subscribe")
    return SubscribeArgs(
        repo=repo, at=at,
        tz=timezone(opts["tz"], "subscribe") if "tz" in opts else None,
        lang=choice(opts["lang"], ("zh", "en"), "lang", "subscribe") if "lang" in opts else None,
        min_importance=choice(opts["min"], ("high", "medium", "low"), "min", "subscribe") if "min" in opts else None,
        branch=branch,
        post_empty=(choice(opts["empty"], ("post", "skip"), "empty", "subscribe") == "post") if "empty" in opts else None,
    )


def describe(sub: Subscription, lang: str) -> dict:
    """The fields of a subscription's line (the confirmation here, the listing of `list`)."""
    return dict(repo=sub.repo, at=sub.at, tz=sub.tz, lang=sub.lang, min=sub.min_importance.value,
                branch=text(lang, "notices.sub_branch", branch=sub.branch) if sub.branch else "",
                empty="" if sub.post_empty else text(lang, "notices.sub_skip_empty"))


async def run(req: Request, args: SubscribeArgs) -> None:
    chat, conv, cfg = req.chat, req.conv, req.cfg
    chat.require_admin(conv)
    repo = chat.check_repo(conv, args.repo)
    source = chat.services.source(repo)
    if args.branch:
        await source.list_commits(parse_window("today", "UTC", chat.clock()), args.branch)  # validates it
    else:
        await source.default_branch()  # validates the repository
    existing = {s.repo.lower(): s for s in await chat.subs.for_channel(conv.platform, conv.channel)}
    old = existing.get(repo.lower())
    base = old or Subscription(conv.platform, conv.channel, repo, tz=cfg.tz, lang=cfg.lang)
    sub = replace(base, repo=repo, at=args.at or base.at, tz=args.tz or base.tz, lang=args.lang or base.lang,
                  min_importance=Importance(args.min_importance) if args.min_importance else base.min_importance,
                  branch=args.branch or base.branch,
                  post_empty=base.post_empty if args.post_empty is None else args.post_empty)
    await chat.subs.upsert(sub)
    key = "notices.resubscribed" if old else "notices.subscribed"
    await req.reply(Notice(req.say(key, **describe(sub, req.lang)), lang=req.lang))


COMMAND = Command("subscribe", ("sub", "订阅"), parse, run)

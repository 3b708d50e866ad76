"""`subscribe owner/repo [weekly mon] [at 09:30] [tz ZONE] [lang zh|en] [min high|medium|low]
[branch B…] [empty post|skip] [paths GLOB…|none] [exclude GLOB…|none] [authors NAME…|none]
[exclude-authors NAME…|none] [bots show|collapse] [alerts high|off]` — a
daily push of the previous day's digest into this conversation, or with `weekly DAY [HH:MM]` the
roll-up of the previous ISO week on that day (admins only when admins are configured). A channel
may hold both for one repository. Subscribing again updates the options named (`paths none`
clears a filter). `paths` routes a monorepo: one channel subscribes `frontend/**`, another `backend/**`.
`alerts high` also posts each new high-importance commit on its own as it lands (bot/alerts/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...channels.alerted import AlertLedger
from ...core import platform_registry
from ...core.chat_platform import Notice
from ...core.models import ALERT_LEVELS, Importance, Subscription
from ...core.window import WEEKDAYS, parse_window
from ...fork.annotate import check_fork
from ...fork.naming import ForkError, ForkNotFound, parse_fork
from ...i18n import phrase
from ...sources.branches import is_several
from ...sources.branches import resolve as resolve_branches
from ..grammar import CommandError, choice, options, repo_word, timezone
from .base import Command, Request
from .describe import describe, line_key
from .filters import split_filters

_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
OPTION_WORDS = ("at", "tz", "lang", "min", "branch", "empty", "fork", "alerts")
CADENCE_WORDS = {"weekly": True, "每周": True, "daily": False, "每天": False}
_DAY_WORDS = {
    **{d: d for d in WEEKDAYS},
    **{
        name: WEEKDAYS[i]
        for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    },
    **{
        f"{p}{c}": WEEKDAYS[i]
        for p in ("周", "星期", "週", "礼拜")
        for i, c in enumerate(("一", "二", "三", "四", "五", "六", "日"))
    },
    "周天": "sun",
    "星期天": "sun",
}


@dataclass(frozen=True)
class SubscribeArgs:
    repo: str
    at: str | None = None
    tz: str | None = None
    lang: str | None = None
    min_importance: str | None = None
    branch: str | None = None
    post_empty: bool | None = None
    weekly: bool = False  # the weekly roll-up subscription (else the daily one)
    weekday: str | None = None  # mon … sun, when given
    paths: tuple[str, ...] | None = None  # None: unchanged; (): cleared
    exclude: tuple[str, ...] | None = None
    bots: str | None = None
    fork: str | None = None  # "" removes it
    authors: tuple[str, ...] | None = None  # None: unchanged; (): cleared
    exclude_authors: tuple[str, ...] | None = None
    alerts: str | None = None  # high | off; None: unchanged


def _time(value: str) -> str:
    m = _HHMM.match(value)
    if not m:
        raise CommandError(phrase("errors.bad_time", value=value), "subscribe")
    return f"{int(m.group(1)):02d}:{m.group(2)}"


def _cadence(words: list[str]) -> tuple[list[str], bool | None, str | None, str | None]:
    """(the other words, weekly?, weekday, time) from `weekly [DAY] [HH:MM]` or `daily`."""
    rest: list[str] = []
    weekly = weekday = at = None
    i = 0
    while i < len(words):
        word = words[i].lower()
        if word not in CADENCE_WORDS or (i and words[i - 1].lower() in OPTION_WORDS):
            rest.append(words[i])
            i += 1
            continue
        if weekly is not None:
            raise CommandError(phrase("week.cadence_twice"), "subscribe")
        weekly = CADENCE_WORDS[word]
        i += 1
        if (
            weekly
            and i < len(words)
            and words[i].lower() not in (*OPTION_WORDS, *CADENCE_WORDS)
            and not _HHMM.match(words[i])
        ):
            day = _DAY_WORDS.get(words[i].lower())
            if day is None:
                raise CommandError(phrase("week.bad_weekday", value=words[i]), "subscribe")
            weekday = day
            i += 1
        if weekly and i < len(words) and _HHMM.match(words[i]):
            at = _time(words[i])
            i += 1
    return rest, weekly, weekday, at


def parse(args: list[str]) -> SubscribeArgs:
    if not args:
        raise CommandError(phrase("errors.subscribe_no_repo"), "subscribe")
    repo = repo_word(args[0], "subscribe")
    rest, filters = split_filters(args[1:], "subscribe", stop_words=(*OPTION_WORDS, *CADENCE_WORDS), allow_none=True)
    rest, weekly, weekday, weekly_at = _cadence(rest)
    opts = options(
        rest,
        {
            "at": "HH:MM",
            "tz": phrase("errors.expect_zone"),
            "lang": "zh|en",
            "min": "high|medium|low",
            "empty": "post|skip",
            "fork": "org/our-fork@branch|off",
            "alerts": "high|off",
        },
        "subscribe",
    )
    if weekly_at and "at" in opts:
        raise CommandError(phrase("errors.option_twice", option="at"), "subscribe")
    at = _time(opts["at"]) if "at" in opts else weekly_at
    return SubscribeArgs(
        repo=repo,
        at=at,
        tz=timezone(opts["tz"], "subscribe") if "tz" in opts else None,
        lang=choice(opts["lang"], ("zh", "en"), "lang", "subscribe") if "lang" in opts else None,
        min_importance=choice(opts["min"], ("high", "medium", "low"), "min", "subscribe") if "min" in opts else None,
        branch=filters.branch,
        post_empty=(choice(opts["empty"], ("post", "skip"), "empty", "subscribe") == "post")
        if "empty" in opts
        else None,
        weekly=bool(weekly),
        weekday=weekday,
        paths=filters.paths,
        exclude=filters.exclude,
        bots=filters.bots,
        fork=fork_word(opts["fork"]) if "fork" in opts else None,
        authors=filters.authors,
        exclude_authors=filters.exclude_authors,
        alerts=choice(opts["alerts"], ALERT_LEVELS, "alerts", "subscribe") if "alerts" in opts else None,
    )


def fork_word(value: str) -> str:
    """`org/our-fork@branch` as named (checked for form here, for existence when run), or ""
    for `off`/`none` (the subscription drops its fork)."""
    if value.lower() in ("off", "none", "-"):
        return ""
    try:
        return parse_fork(value, "en").raw  # a git URL's credentials left out (fork/naming.py)
    except (ForkError, ForkNotFound) as exc:
        raise CommandError(exc.args[0], "subscribe") from None


async def run(req: Request, args: SubscribeArgs) -> None:
    tools, conv, cfg = req.tools, req.conv, req.cfg
    tools.policy.require_admin(conv)
    repo = tools.policy.check_repo(conv, args.repo)
    source = tools.sources.get(repo)
    if args.branch and is_several(args.branch):
        await resolve_branches(source, args.branch)  # each pattern matches a branch, not too many
    elif args.branch:
        await source.list_commits(parse_window("today", "UTC", tools.clock()), args.branch)  # validates it
    else:
        await source.default_branch()  # validates the repository
    if args.fork:
        await _check_fork(req, args.fork)
    weekday = args.weekday or ("mon" if args.weekly else None)
    existing = {s.key: s for s in await tools.subs.for_channel(conv.platform, conv.channel)}
    old = existing.get(Subscription(conv.platform, conv.channel, repo, weekday=weekday).key)
    base = old or Subscription(conv.platform, conv.channel, repo, tz=cfg.tz, lang=cfg.lang, weekday=weekday)
    sub = replace(
        base,
        repo=repo,
        at=args.at or base.at,
        tz=args.tz or base.tz,
        lang=args.lang or base.lang,
        min_importance=Importance(args.min_importance) if args.min_importance else base.min_importance,
        branch=args.branch or base.branch,
        post_empty=base.post_empty if args.post_empty is None else args.post_empty,
        weekday=(args.weekday or base.weekday) if args.weekly else None,
        paths=base.paths if args.paths is None else args.paths,
        exclude=base.exclude if args.exclude is None else args.exclude,
        bots=args.bots or base.bots,
        authors=base.authors if args.authors is None else args.authors,
        exclude_authors=base.exclude_authors if args.exclude_authors is None else args.exclude_authors,
        fork=base.fork if args.fork is None else (args.fork or None),
        owner=conv.user if args.fork else base.owner,
        alerts=args.alerts or base.alerts,
    )
    await tools.subs.upsert(sub)
    await tools.builder.note_reader(source, sub.lang)  # its analyses are written in this language too from now on
    alerts = AlertLedger(tools.store)
    if sub.alerts == "high":  # from now on: the commits already there are never alerted
        await alerts.start(conv.platform, conv.channel, repo, tools.clock())
    elif not any(s.alerts == "high" and s.repo.lower() == repo.lower() and s.key != sub.key for s in existing.values()):
        await alerts.stop(conv.platform, conv.channel, repo)
    key = line_key(sub, "resubscribed" if old else "subscribed")
    await req.reply(Notice(req.say(key, **describe(sub, req.lang)), lang=req.lang))


async def _check_fork(req: Request, value: str) -> None:
    """The fork exists and has the branch (a GitHub fork is fetched into its mirror now, so the
    first digest does not wait for it). Chat users name GitHub forks; only the operator's own
    terminal may point at a local path, as for repositories."""
    spec = parse_fork(value, req.lang, req.tools.settings)
    operator = platform_registry.is_operator(req.conv.platform)
    if spec.kind == "path" and not operator:
        raise CommandError(phrase("downstream.fork_policy"), "subscribe")
    if not operator:
        req.tools.policy.check_git_host(spec.kind, spec.where)
    try:
        await check_fork(spec, req.tools.settings, req.lang)
    except (ForkError, ForkNotFound) as exc:
        raise CommandError(exc.args[0], "subscribe") from None


COMMAND = Command("subscribe", ("sub", "订阅"), parse, run)

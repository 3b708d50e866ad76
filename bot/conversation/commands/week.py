"""`week [DATE] [owner/repo …] [paths GLOB…] [exclude GLOB…] [authors NAME…] [exclude-authors NAME…]
[bots show|collapse]` — the weekly
roll-up (bot/digest/rollup.py) of the ISO week holding DATE (default: last week, Monday to Sunday), posted
like a digest: one message, high and medium commits by area with their day, the low ones counted.
DATE is any one day the chat understands (`2026-01-19`, `1月19日`, `today`, `上周`); a week still
running ends today. `/digest 上周` stays the ordinary digest of that range; `week` is the roll-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from ...core.window import is_date_token, parse_window, week_window, zone
from ...i18n import phrase
from ..grammar import CommandError, repo_word
from .base import Command, Request
from .delivering import deliver
from .filters import FilterArgs, split_filters

_RANGE = re.compile(r"\.\.|至|到")


@dataclass(frozen=True)
class WeekArgs:
    when: str | None  # None: last week
    repos: tuple[str, ...]
    filters: FilterArgs = FilterArgs()


def parse(args: list[str]) -> WeekArgs:
    args, filters = split_filters(args, "week")
    when = None
    repos: list[str] = []
    for word in args:
        if is_date_token(word):
            if _RANGE.search(word):
                raise CommandError(phrase("week.one_day", value=word), "week")
            if when is not None:
                raise CommandError(phrase("errors.two_dates", first=when, second=word), "week")
            when = word
        else:
            repos.append(repo_word(word, "week"))
    return WeekArgs(when, tuple(dict.fromkeys(repos)), filters)


async def run(req: Request, args: WeekArgs) -> None:
    tools = req.tools

    def window(tz: str):
        now = tools.clock()
        today = now.astimezone(zone(tz)).date()
        if args.when is None:
            day = today - timedelta(days=7)
        else:  # the day's own checks (a real date, not in the future); its week is the roll-up's
            day = parse_window(args.when, tz, now, tools.settings.max_range_days).start.date()
        return week_window(day, tz, today)

    await deliver(req, args.repos, args.filters, week=True, window=window)


COMMAND = Command("week", ("周报",), parse, run)  # not "weekly"/"每周": questions start so

"""Noise controls for what a digest posts: dependency bots collapsed to one line per bot.

Who is a dependency bot: Renovate, Dependabot and pre-commit.ci by name (`renovate[bot]`,
`dependabot[bot]`, `pre-commit-ci[bot]`, any case, with or without `[bot]`): everything they
commit is an update. Any other author ending in `[bot]` is a bot, but some bots write code (an
automation bot's fixes, a release bot's version bump): their commits collapse only when the
analysis says the change is a dependency update; the rest are shown like anyone's.

What collapses: a bot's low and medium commits. A high one (a major bump with a breaking note, a
security update) stays visible as a commit of its own — the collapse hides routine, never news.
The collapsed commits are still reachable: each bot line's menu (Slack) or panel (Feishu) lists
them, the report page and the attached Markdown report hold every one, and questions in the
thread find them like any other commit. `bots show` (per subscription, or on `/digest`) turns it off.
Pure: what a bot's commit updates is bot/digest/updates.py's (it reads the commit's files).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.chat_platform import BotGroup
from ..core.models import ChangeType, DigestEntry, Importance

DEPENDENCY_BOTS = ("renovate", "dependabot", "pre-commit-ci")
UPDATES_SHOWN = 3  # versions named on a bot line before "…"
_BOT_SUFFIX = re.compile(r"\[bot\]$", re.I)


def is_bot(author: str) -> bool:
    name = (author or "").strip().lower()
    return bool(_BOT_SUFFIX.search(name)) or _BOT_SUFFIX.sub("", name) in DEPENDENCY_BOTS


def is_dependency_bot(author: str) -> bool:
    return _BOT_SUFFIX.sub("", (author or "").strip().lower()) in DEPENDENCY_BOTS


def collapsible(entry: DigestEntry) -> bool:
    """A bot's routine commit: folded into its bot's line (never a high one)."""
    author = entry.commit.author
    if entry.importance is Importance.HIGH or not is_bot(author):
        return False
    if is_dependency_bot(author):
        return True
    return entry.analysis is not None and entry.analysis.change_type is ChangeType.DEPENDENCIES


def collapse(entries: Sequence[DigestEntry], mode: str = "collapse") -> tuple[list[DigestEntry], list[BotGroup]]:
    """(entries still shown one by one, bot groups). Order is kept in both."""
    if mode == "show":
        return list(entries), []
    kept: list[DigestEntry] = []
    groups: dict[str, list[DigestEntry]] = {}
    for e in entries:
        if collapsible(e):
            groups.setdefault(e.commit.author, []).append(e)
        else:
            kept.append(e)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0].lower()))
    return kept, [BotGroup(author, tuple(es)) for author, es in ordered]

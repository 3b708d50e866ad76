"""The chat commands, shared by Slack's `/digest`, Feishu's @-commands and the console: one module
per command (its grammar, handler and text keys), listed once in COMMANDS.

  digest [DATE|A..B|today|yesterday|昨天|上周 …] [REPO …] [paths GLOB…] [exclude GLOB…] [bots show|collapse]
  week [DATE] [REPO …] [paths GLOB…] [exclude GLOB…] [bots show|collapse]
  digest TAG..TAG [REPO …]      (a release range: the upgrade report of its first-parent commits)
  release [TAG] [REPO]          (the range from the tag before TAG to TAG; no TAG: the newest)
  subscribe REPO [weekly DAY] [at HH:MM] [tz ZONE] [lang zh|en] [min high|medium|low] [branch B]
            [empty post|skip] [paths GLOB…|none] [exclude GLOB…|none] [bots show|collapse]
  unsubscribe REPO [daily|weekly]
  list
  ask <SHA|#PR> QUESTION
  ask QUESTION                  (about a period: this week, 上周, since Monday, A..B; in owner/repo)
  config [lang zh|en] [tz ZONE] [questions mention|all] [file on|off]
  owners [[map] OWNER MENTION | remove OWNER] (CODEOWNERS names → who is mentioned here)
  watch REPO GLOB [at HH:MM] [tz ZONE]      (in a direct message)
  unwatch REPO [GLOB]
  watches
  help

Adding a command: a module exporting `COMMAND = Command(name, aliases, parse, run)`, its line in
COMMANDS, and `usage.<name>` in both catalogues (bot/i18n/*.toml).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile
from typing import Any

from ...core.window import is_date_token, is_ref_range
from ...i18n import echo, phrase, text
from ..grammar import CommandError, usage_line
from . import ask, config, digest, help, listing, owners, release, subscribe, unsubscribe, unwatch, watch, watches, week
from .base import Command, CommandTools, Request
from .filters import FILTER_WORDS

COMMANDS: tuple[Command, ...] = (
    digest.COMMAND,
    week.COMMAND,
    release.COMMAND,
    subscribe.COMMAND,
    unsubscribe.COMMAND,
    listing.COMMAND,
    ask.COMMAND,
    config.COMMAND,
    owners.COMMAND,
    watch.COMMAND,
    unwatch.COMMAND,
    watches.COMMAND,
    help.COMMAND,
)
BY_WORD: dict[str, Command] = {word: c for c in COMMANDS for word in (c.name, *c.aliases)}
COMMAND_WORDS = frozenset(BY_WORD)

__all__ = [
    "COMMANDS",
    "COMMAND_WORDS",
    "Command",
    "CommandError",
    "Parsed",
    "CommandTools",
    "Request",
    "help_text",
    "looks_like_command",
    "parse_command",
    "usage",
]


@dataclass(frozen=True)
class Parsed:
    command: Command
    args: Any  # what the command's `parse` returned


def parse_command(text_: str) -> Parsed:
    """Parse the words after `/digest` (or after the @-mention). Empty → yesterday's digest."""
    words = (text_ or "").split()
    if not words:
        return Parsed(digest.COMMAND, digest.parse([]))
    head = words[0].lower()
    command = BY_WORD.get(head)
    if command is None:
        # `/digest 2026-01-28 owner/repo`, `/digest 昨天`: the verb is optional for digests — when
        # every word before its noise options (`paths GLOB…`, `exclude …`, `bots …`) is a date or a
        # repository (`@bot 上周 FP8 在 ROCm 上有什么改动？` is a question).
        lead = list(takewhile(lambda w: w.lower() not in FILTER_WORDS, words))

        # A range of refs (`0.11.8..0.11.9 owner/repo`) is a digest too.
        def fits(w: str) -> bool:
            return is_date_token(w) or is_ref_range(w) or "/" in w

        # `/digest paths src/**`, `/digest authors ada`: the options alone are yesterday's digest
        # so filtered (lead is empty only when the first word is an option).
        if all(fits(w) for w in lead):
            return Parsed(digest.COMMAND, digest.parse(words))
        raise CommandError(phrase("errors.unknown_command", word=echo(words[0])), None)
    return Parsed(command, command.parse(words[1:]))


def usage(lang: str, command: str | None = None, prefix: str = "/digest") -> str:
    """One command's usage line, or every command's as a bulleted list."""
    if command:
        return usage_line(lang, command, prefix)
    return "\n".join(f"• `{prefix} {text(lang, c.usage_key)}`" for c in COMMANDS)


def help_text(lang: str, prefix: str = "/digest") -> str:
    return text(lang, "help.intro", prefix=prefix) + "\n" + usage(lang, prefix=prefix) + "\n" + text(lang, "help.level")


def looks_like_command(text_: str) -> bool:
    """Top-level @-mentions and DMs are commands when they parse as one (including a digest
    without its verb: `@bot 2026-01-28 owner/repo`), or start with a command word (and then get
    that command's usage when malformed); anything else is a question."""
    try:
        parse_command(text_)
        return bool(text_.strip())
    except CommandError as exc:
        return exc.command is not None

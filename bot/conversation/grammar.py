"""What every command's grammar shares: the error that names its command, repository words,
`key value` options, choices and time zones. Pure: words in, values or a CommandError out.

Errors carry a Phrase (bot.i18n), not a sentence: the parser does not know the channel's
language; the router says the error in it, with the command's usage line.
"""

from __future__ import annotations

import re

from settings import check_timezone

from ..core.models import UsageError
from ..i18n import OneOf, Phrase, echo, phrase, text


class CommandError(UsageError):
    """A malformed command; `command` names which usage line to show with it (None: the help)."""

    def __init__(self, message: Phrase | str, command: str | None = None):
        super().__init__(message)
        self.command = command


def repo_word(word: str, command: str) -> str:
    """`owner/name`, also as Slack auto-links it (`<https://github.com/a/b|a/b>`) or as a URL."""
    word = word.strip("<>")
    if "|" in word:
        word = word.split("|", 1)[1]
    word = re.sub(r"^https?://[^/]+/", "", word).removesuffix(".git").rstrip("/") or word
    if not word or word.startswith("-"):
        raise CommandError(phrase("errors.not_a_repo", value=echo(word)), command)
    return word


def options(args: list[str], allowed: dict[str, str | Phrase], command: str) -> dict[str, str]:
    """`key value` pairs; every key once, every value present. `allowed` maps each key to what
    its value looks like (for the error)."""
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        key = args[i].lower()
        if key not in allowed:
            raise CommandError(
                phrase("errors.unknown_option", option=echo(args[i]), allowed=", ".join(allowed)), command
            )
        if i + 1 >= len(args):
            raise CommandError(phrase("errors.option_needs_value", option=key, expected=allowed[key]), command)
        if key in found:
            raise CommandError(phrase("errors.option_twice", option=key), command)
        found[key] = args[i + 1]
        i += 2
    return found


def choice(value: str, choices: tuple[str, ...], option: str, command: str) -> str:
    v = value.lower()
    if v not in choices:
        raise CommandError(phrase("errors.bad_choice", option=option, choices=OneOf(choices), value=value), command)
    return v


def timezone(value: str, command: str) -> str:
    try:
        check_timezone(value)
    except ValueError:
        raise CommandError(phrase("errors.bad_tz", value=value), command) from None
    return value


def usage_line(lang: str, command: str, prefix: str = "/digest") -> str:
    """One command's usage line, as typed here (`/digest …` on Slack and the console, `@bot …` on Feishu)."""
    return f"{prefix} {text(lang, f'usage.{command}')}"

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
    """`owner/name`, also as Slack auto-links it (`<https://github.com/a/b|a/b>`) or as a github.com
    URL; any other URL or `gitlab:…` name as typed (the source registry, bot/sources/registry.py,
    says what it names)."""
    word = word.strip("<>")
    if "|" in word:
        word = word.split("|", 1)[1]
    word = re.sub(r"^https?://(www\.)?github\.com/", "", word, flags=re.I).removesuffix(".git").rstrip("/") or word
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


# A reader's level correction, typed: `level N too-high` in the terminal (message #N), `level SHA
# too-high` in a digest's thread on Slack and Feishu. Like the commands' words, the Chinese ones
# work too: `等级` for `level`, `太高`/`太低` (or `偏高`/`偏低`) for the directions.
LEVEL_WORDS = frozenset({"level", "等级"})
_DIRECTIONS = {
    "too-high": "too_high",
    "too_high": "too_high",
    "太高": "too_high",
    "偏高": "too_high",
    "too-low": "too_low",
    "too_low": "too_low",
    "太低": "too_low",
    "偏低": "too_low",
}
_SHA = re.compile(r"[0-9a-fA-F]{7,40}")


def level_direction(word: str) -> str | None:
    """`too_high` / `too_low` for a direction word in either language; None for anything else."""
    return _DIRECTIONS.get(word.strip().lower())


def typed_level(text_: str) -> tuple[str, str] | None:
    """`level SHA too-high`, `等级 太低 SHA`, `level 太高` (the SHA and the direction in either
    order, the SHA optional): (sha or '', too_high|too_low); ('', '') for a level correction
    typed wrong (a direction or a SHA, and words that do not fit: its usage is the answer); None
    when the words are no level correction (`level of risk here?` is a question)."""
    words = (text_ or "").split()
    if not words or words[0].lower() not in LEVEL_WORDS:
        return None
    rest = words[1:]
    directions = [d for d in map(level_direction, rest) if d]
    shas = [w.lower() for w in rest if _SHA.fullmatch(w)]
    if not directions and not shas:
        return None
    if len(directions) != 1 or len(shas) > 1 or len(rest) != len(directions) + len(shas):
        return "", ""
    return (shas[0] if shas else ""), directions[0]

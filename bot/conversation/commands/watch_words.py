"""The words `watch`, `unwatch` and `watches` share: a path pattern as typed, and a watched
repository as shown."""

from __future__ import annotations

from ...core.models import BotError
from ...digest.pathfilter import GlobError, normalise
from ...i18n import phrase
from ..grammar import CommandError
from ..ports import SourceRegistry


def glob_word(word: str, command: str) -> str:
    try:
        return normalise(word.strip("`"))  # chat clients like to put paths in backticks
    except GlobError as exc:  # the same patterns, and the same sentences, as `paths` (bot/digest/pathfilter.py)
        raise CommandError(phrase(f"noise.{exc.reason}", **exc.fields), command) from None


def repo_name(sources: SourceRegistry, repo: str) -> str:
    """How a watched repository is shown: owner/name (a local clone's too), else as it was named."""
    try:
        return sources.get(repo).name
    except BotError:
        return repo

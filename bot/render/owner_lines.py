"""The code-owner lines of a digest's parent message, in words every renderer shares: each
renderer puts its own mention (or the escaped name, which pings nobody) where the owner goes."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.chat_platform import OwnerPing
from ..i18n import Count, text

_WHO = "\ue000"  # where the owner goes; a private-use character no catalogue sentence holds


def line_parts(lang: str, ping: OwnerPing) -> tuple[str, str]:
    """(the words before the owner, the words after): "@team: your paths are touched by 2 high commits"."""
    high, medium = Count(ping.high, "owners.high").say(lang), Count(ping.medium, "owners.medium").say(lang)
    if ping.high and ping.medium:
        counts = text(lang, "owners.both", high=high, medium=medium)
    else:
        counts = high if ping.high else medium
    before, _, after = text(lang, "owners.line", who=_WHO, counts=counts).partition(_WHO)
    return before, after


def heading(lang: str) -> str:
    return text(lang, "owners.heading")


def more(lang: str, n: int) -> str:
    return text(lang, "owners.more", n=n)


def entry_owners(lang: str, owners: Sequence[str]) -> str:
    """'Owners: @a, @org/b' under an entry ('' without owners); the caller escapes it."""
    return text(lang, "owners.entry", owners=", ".join(owners)) if owners else ""

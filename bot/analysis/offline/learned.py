"""The learned profile's word on a level the rules reached (bot/taste): this repository's own
release notes decide between low and medium where the rules only guessed from size and words.

What the rules know for certain stays: a declared breaking change, a security fix or a removed
public API is high; a change to tests, docs, CI or other non-shipping files (or development-only
dependencies) is low. Elsewhere the profile moves the level when it is clear enough, and the reason
says so in the maintainers' terms ("listed under “Bug fixes”").
"""

from __future__ import annotations

from ...i18n import phrase
from ...models import Importance
from .context import Context, Fact

FIRM_ORDER = 40  # facts named before this (breaking, security, removal) are never overruled
RAISE_AT = 0.5  # above this probability of being announced, a low commit is medium
LOWER_AT = 0.5  # below it, a medium commit is low
HIGH_DOWN_AT = 0.15  # a high level from a softer rule (a revert, a default) gives way only to a clear no
HIGH_AT = 0.5  # changes this project lists under breaking changes or security are high


def weigh(c: Context, found: list[Fact], cap: Fact | None, level: Importance) -> Fact | None:
    """The fact that replaces the rules' level and reason, or None when the rules stand."""
    judgement = c.judgement
    if judgement is None or (cap is not None and cap.firm and cap.level is level):
        return None
    if level is Importance.HIGH and any(f.level is Importance.HIGH and f.order < FIRM_ORDER for f in found):
        return None
    p = judgement.above_low
    if level is not Importance.HIGH and judgement.high >= HIGH_AT:
        return Fact(Importance.HIGH, phrase("offline.learned.listed_under", heading=judgement.heading))
    if level is Importance.LOW and p >= RAISE_AT:
        if judgement.heading:
            return Fact(Importance.MEDIUM, phrase("offline.learned.listed_under", heading=judgement.heading))
        return Fact(Importance.MEDIUM, phrase("offline.learned.announced"))
    if level is Importance.MEDIUM and p < LOWER_AT:
        return Fact(Importance.LOW, phrase("offline.learned.not_announced"))
    if level is Importance.HIGH and p < HIGH_DOWN_AT:
        return Fact(Importance.MEDIUM, phrase("offline.learned.high_not_announced"))
    return None

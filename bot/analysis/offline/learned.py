"""The learned profile's word on a level the rules reached (bot/taste): this repository's own
release notes decide between low and medium where the rules only guessed from size and words.

What the rules know for certain stays: every high rule (a declared breaking change, a security fix,
a removed public API, a changed default …) stays high; a change to tests, docs, CI or other
non-shipping files (or development-only dependencies) stays low; a medium that a specific fact asks
for stays medium. The profile raises what the rules left low when this project announces such
changes, lowers a medium the rules only guessed from the diff's shape (its size, or that it is a
fix, feature or speed-up of shipped code), confirms such a guess in the maintainers' terms, and
raises to high what the project lists as breaking; the reason says so ("listed under “Bug fixes”").
"""

from __future__ import annotations

from ...core.models import Importance
from ...i18n import phrase
from .context import Context, Fact

RAISE_AT = 0.5  # above this probability of being announced, a low commit is medium
LOWER_AT = 0.5  # below it, a medium the rules only guessed from size is low
LOWER_SPECIFIC_AT = 0.2  # a medium a specific fact asks for gives way only to a clear no
HIGH_AT = 0.5  # changes this project lists under breaking changes or security are high


def weigh(c: Context, found: list[Fact], cap: Fact | None, level: Importance) -> Fact | None:
    """The fact that replaces the rules' level and reason, or None when the rules stand."""
    judgement = c.judgement
    if judgement is None or (cap is not None and cap.firm and cap.level is level):
        return None
    if level is Importance.HIGH:
        return None  # every high rule names something specific that needs action: it stands
    p = judgement.above_low
    if level is not Importance.HIGH and judgement.high >= HIGH_AT:
        return Fact(Importance.HIGH, phrase("offline.learned.listed_under", heading=judgement.heading))
    if level is Importance.LOW and p >= RAISE_AT:
        if judgement.heading:
            return Fact(Importance.MEDIUM, phrase("offline.learned.listed_under", heading=judgement.heading))
        return Fact(Importance.MEDIUM, phrase("offline.learned.announced"))
    # A medium that rests on the diff's shape alone (its size, or that it fixes, adds or speeds up
    # shipped code) is a guess the notes overrule; one a specific fact asks for (a crash fixed, a
    # new flag, a solver change, a hardened release) needs a clear no.
    guessed = not any(f.level is Importance.MEDIUM and not f.size for f in found)
    if level is Importance.MEDIUM and p < (LOWER_AT if guessed else LOWER_SPECIFIC_AT):
        return Fact(Importance.LOW, phrase("offline.learned.not_announced"))
    if level is Importance.MEDIUM and guessed and p >= RAISE_AT and judgement.heading:
        # The notes confirm the guess: their heading says more than the shape of the diff.
        return Fact(Importance.MEDIUM, phrase("offline.learned.listed_under", heading=judgement.heading))
    return None

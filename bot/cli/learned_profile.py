"""`python -m bot profile --repo R [--date D]`: what a repository's learned profile knows, as of a day.

The operator's view of bot/taste: which release notes it learned from and what they said — or, in
one sentence, why it learns nothing (no notes, too few labelled commits, or notes that list every
pull request, as GitHub's automatic "What's Changed" does, where being listed means nothing).
"""

from __future__ import annotations

import sys
from collections import Counter
from datetime import UTC, datetime

from settings import Settings

from ..core.models import Importance
from ..core.window import parse_window, zone
from ..i18n import text
from ..taste.book import epoch, label_as_of
from ..taste.model import LearnedProfile

WORDS = 8


async def profile_command(args, settings: Settings) -> int:
    from ..sources.opened import open_source

    lang = args.lang or settings.default_lang
    tz = settings.default_tz
    zone(tz)
    window = parse_window(args.date or "today", tz, datetime.now(UTC), settings.max_range_days)
    source = open_source(args.repo, settings)
    if not hasattr(source, "history"):
        sys.stdout.write(text(lang, "taste.no_history", repo=source.name) + "\n")
        return 0
    as_of = epoch(window.start_utc)
    examples, verdict = await label_as_of(source, as_of, None, settings.learn_history_commits)
    day = as_of.date().isoformat()
    lines = [text(lang, "taste.title", repo=source.name, day=day)]
    if verdict.kind == "no_notes":
        lines.append(text(lang, "taste.no_notes", day=day))
    elif verdict.kind == "lists_everything":
        lines.append(text(lang, "taste.lists_everything", share=f"{verdict.listed_share:.0%}"))
    elif verdict.kind == "too_few":
        lines.append(text(lang, "taste.too_few", examples=verdict.examples, above=verdict.above_low))
    else:
        lines.append(
            text(
                lang,
                "taste.learned",
                examples=verdict.examples,
                above=verdict.above_low,
                share=f"{verdict.listed_share:.0%}",
            )
        )
        sources = Counter(e.source for e in examples)
        lines.append(text(lang, "taste.sources", sources=", ".join(f"{k} {n}" for k, n in sources.most_common())))
        headings = Counter(e.heading for e in examples if e.heading and e.level is not Importance.LOW)
        if headings:
            listed = ", ".join(f"“{h}” {n}" for h, n in headings.most_common(6))
            lines.append(text(lang, "taste.headings", headings=listed))
        announced, quiet = LearnedProfile(examples).telling_words(WORDS)
        lines.append(text(lang, "taste.words_announced", words=", ".join(announced)))
        lines.append(text(lang, "taste.words_quiet", words=", ".join(quiet)))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0

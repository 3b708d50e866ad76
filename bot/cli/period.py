"""`python -m bot ask --repo R [--since A] [--until B] [--tz Z] "question"`: a question about a
period, streamed to the terminal (the period from the flags, else from the question's words)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from ..core.window import zone
from ..history.period import find_period, period_from_flags
from ..runtime.services import Services
from .terminal import ProgressBar


async def ask_history(args, settings, question: str, lang: str) -> int:
    tz = args.tz or settings.default_tz
    zone(tz)
    now = datetime.now(UTC)
    if args.since or args.until:
        window = period_from_flags(args.since, args.until, tz, now, settings.max_range_days)
        search = question
    else:
        period = find_period(question, tz, now, settings.max_range_days)
        window, search = period.window, period.question
    services = Services.build(settings)
    bar = ProgressBar()
    cleared = False
    try:
        source = services.source(args.repo)
        assert services.history is not None  # Services.build always builds it
        async for piece in services.history.answer(
            source, window, question, lang, branch=args.branch, search=search, progress=bar
        ):
            if not cleared:  # the progress line gives way to the answer
                bar.close()
                cleared = True
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
    finally:
        if not cleared:
            bar.close()
        await services.aclose()
    return 0

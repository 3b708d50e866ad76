"""Digests being built in this process now, so that background work can stand aside for them.

Learning a repository's profile costs a second or two of CPU (bot/taste/book.py). Started by a
repository's first digest, it competed for the one interpreter with the digest that started it:
on the 2-core machine that first digest took 1.5× its ideal instead of 1.2×
(bench/bench_taste.py, "never learnt"). Learning started in the background now waits until no
digest is being built here, for at most a bound, so a bot that is never idle still learns.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator

_building = 0  # touched on the event loop's thread only


@contextlib.contextmanager
def building() -> Iterator[None]:
    """Around the work of one digest that a reader (a person, a channel's push) waits for."""
    global _building
    _building += 1
    try:
        yield
    finally:
        _building -= 1


async def quiet(max_wait: float, poll: float = 0.2) -> None:
    """Return once no digest is being built here, or after `max_wait` seconds whatever happens."""
    deadline = time.monotonic() + max_wait
    # Polled, not an asyncio.Event: an Event binds to one event loop, and this count is the
    # process's (a test process runs many loops); a few wake-ups a second cost nothing.
    while _building and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(poll)

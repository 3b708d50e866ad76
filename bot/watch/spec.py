"""What one watch's run for one day is, as JSON a job queue can carry, and the run the clock makes
for a due watch (keyed so it is made once). Apart from the runner (runner.py), so the clock names a
run without depending on how it is run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class WatchRun:
    platform: str
    user: str
    channel: str
    repo: str
    glob: str
    tz: str
    lang: str
    day: str  # ISO date: the day whose commits are sent
    key: str  # this run's state, ledger and idempotency keys derive from it

    @classmethod
    def from_dict(cls, d: dict) -> WatchRun:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def watch_run(store, watch, day: date) -> WatchRun:
    return WatchRun(
        platform=watch.platform,
        user=watch.user,
        channel=watch.channel,
        repo=watch.repo,
        glob=watch.glob,
        tz=watch.tz,
        lang=watch.lang,
        day=day.isoformat(),
        key=store.k("watchrun", watch.platform, watch.user, watch.repo.lower(), watch.glob, day.isoformat()),
    )

"""What one alert poll is, as JSON a job queue can carry, and the poll the clock (or a verified
GitHub push) makes for an alerting subscription, keyed so it is made once per period. Apart from
the runner (runner.py), so the clock names a poll without depending on how it is run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..core.models import Subscription

WAKE_SECONDS = 5  # pushes to one repository this close together wake one poll


@dataclass(frozen=True)
class AlertPoll:
    platform: str
    channel: str
    repo: str  # as the subscription names it
    key: str  # this poll's ledger and job id derive from it

    @classmethod
    def from_dict(cls, d: dict) -> AlertPoll:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def alerting(sub: Subscription) -> bool:
    return sub.alerts == "high"


def alert_poll(store, sub: Subscription, now: datetime, period: float, why: str = "tick") -> AlertPoll:
    """The poll of `sub`'s conversation and repository for the period holding `now`: every
    ALERT_POLL_SECONDS one ("tick"), and one per WAKE_SECONDS of pushes ("push")."""
    slot = int(now.timestamp() // (period if why == "tick" else WAKE_SECONDS))
    return AlertPoll(
        platform=sub.platform,
        channel=sub.channel,
        repo=sub.repo,
        key=store.k("alertpoll", sub.platform, sub.channel, sub.repo.lower(), why, slot),
    )

"""What a conversation's alerts (bot/alerts/) keep in Redis, apart from the runner that sends them,
so the subscribe command (which starts the cursor) and the daily digest (which marks what was
alerted) read them without depending on how alerts are sent:

  alertsince:{platform}:{channel}:{repo}       JSON: when alerts were switched on, the last poll,
                                               and the branch's head it saw (`tip`)
  alertsent:{platform}:{channel}:{repo}:{sha}  JSON: one commit's alert — "trying" then "done"
                                               (`alerted`: posted on its own; `over`: counted in
                                               the hour's one "N more" message instead)

Each lives LEDGER_TTL (bot/delivery/spec.py's 40 days): a restart sends nothing twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

from ..core.models import Digest, Importance

ALERT_TTL = 40 * 86400  # as a delivery's ledger: longer than any digest window reads back


class Cursor(NamedTuple):
    on: datetime  # when alerts were switched on: nothing older is ever alerted
    polled: datetime  # when the last poll ran
    tip: str | None  # the branch's head that poll saw (None: not yet read)


class AlertLedger:
    def __init__(self, store):
        self.store = store

    def since_key(self, platform: str, channel: str, repo: str) -> str:
        return self.store.k("alertsince", platform, channel, repo.lower())

    def sent_key(self, platform: str, channel: str, repo: str, sha: str) -> str:
        return self.store.k("alertsent", platform, channel, repo.lower(), sha)

    async def start(self, platform: str, channel: str, repo: str, now: datetime) -> bool:
        """Alerts switched on: only commits from `now` on are new (old history is never alerted).
        Already on: unchanged. True when they were off."""
        return await self.store.set_json(
            self.since_key(platform, channel, repo),
            {"on": now.isoformat(), "polled": now.isoformat()},
            ttl=ALERT_TTL,
            nx=True,
        )

    async def stop(self, platform: str, channel: str, repo: str) -> None:
        """Alerts switched off: switched on again later, they start from then."""
        await self.store.delete(self.since_key(platform, channel, repo))

    async def since(self, platform: str, channel: str, repo: str) -> Cursor | None:
        """Where the last poll left off, or None when alerts are off."""
        raw = await self.store.get_json(self.since_key(platform, channel, repo))
        if not raw:
            return None
        return Cursor(datetime.fromisoformat(raw["on"]), datetime.fromisoformat(raw["polled"]), raw.get("tip"))

    async def polled(self, platform: str, channel: str, repo: str, cursor: Cursor) -> None:
        await self.store.set_json(
            self.since_key(platform, channel, repo),
            {"on": cursor.on.isoformat(), "polled": cursor.polled.isoformat(), "tip": cursor.tip},
            ttl=ALERT_TTL,
        )

    async def alerted(self, platform: str, channel: str, repo: str, shas: Iterable[str]) -> frozenset[str]:
        """Which of `shas` were posted on their own as alerts in this conversation."""
        wanted = list(shas)
        if not wanted:
            return frozenset()
        states = await asyncio.gather(
            *(self.store.get_json(self.sent_key(platform, channel, repo, sha)) for sha in wanted)
        )
        return frozenset(
            sha for sha, state in zip(wanted, states) if (state or {}).get("alerted") and state.get("done")
        )

    async def marked(self, platform: str, channel: str, repo: str, digest: Digest) -> Digest:
        """`digest` with the commits this conversation was alerted to marked so (a copy: the
        cached digest is every conversation's and stays unmarked). Low commits were never alerted."""
        notable = [e.commit.sha for e in digest.entries if e.importance is not Importance.LOW]
        alerted = await self.alerted(platform, channel, repo, notable)
        if not alerted:
            return digest
        entries = tuple(replace(e, alerted=True) if e.commit.sha in alerted else e for e in digest.entries)
        return replace(digest, entries=entries)

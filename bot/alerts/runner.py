"""One alert poll: each new high-importance commit of a subscription's repository posted into its
conversation on its own, once.

The clock (bot/runtime/schedule.py) makes an `AlertPoll` every ALERT_POLL_SECONDS for each
subscription with `alerts high`; a verified GitHub push (handlers/web.py) makes one at once. The
poll lists what the branch gained since the head the last poll saw (whatever the commits' dates:
a push of commits made hours ago is new too); with no such head yet (the first poll) or after a
force-push, the commits since the last poll by committer date (a margin back, for clocks that
disagree, but never before alerts were switched on: old history is never alerted). It keeps those the subscription's
path and author filters keep, analyses them through the digests' own cached path
(`DigestBuilder.analysis`: no second LLM call, and the next digest reuses the analysis), lays
the readers' level corrections over them (`DigestBuilder.corrected`) and posts each that is then
high as one message, whose thread takes questions like a digest's.

At most ALERT_MAX_PER_HOUR alerts per subscription in one clock hour (UTC): the rest are counted
in one message for that hour, edited as the count grows. Every alert is sent once even across a
crash or a restart: its state under (conversation, repository, commit) says "trying" before the
send and "done" after (bot/channels/alerted.py), and a keyed send that was tried is re-sent with
the same key, which the platform recognises (as watches do: bot/watch/runner.py). Polls of one
subscription never overlap (a lease), so a state found "trying" is always a dead poll's.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import ClassVar

from ..channels.alerted import ALERT_TTL, AlertLedger, Cursor
from ..channels.subscriptions import Subscriptions
from ..channels.threads import Threads
from ..core.chat_platform import CommitDetail, MessageRef, Notice
from ..core.models import (
    BotError,
    Commit,
    Digest,
    DigestEntry,
    Importance,
    NotFoundError,
    Subscription,
    Window,
    to_dict,
)
from ..core.tenants import scope_of
from ..core.window import zone
from ..delivery.once import Job, JobRunner, send_once
from ..delivery.spec import author_filter_of, path_filter_of
from ..digest.branch_marks import on_branches
from ..digest.builder import DigestBuilder
from ..digest.pathfilter import touched_paths
from ..i18n import localize, text
from ..sources.branches import Followed, is_several, list_followed
from ..sources.opened import Sources
from .spec import AlertPoll, alerting

log = logging.getLogger(__name__)

LOOKBACK = timedelta(minutes=10)  # a poll reads this far before the last one: committer clocks disagree
AHEAD = timedelta(minutes=10)  # … and this far after now
POLL_LEDGER_TTL = 86400  # a poll's "done": one poll per period, however often the clock ticks


@dataclass(eq=False)
class AlertRunner(JobRunner[AlertPoll]):
    sources: Sources
    builder: DigestBuilder
    subs: Subscriptions
    threads: Threads
    ledger: AlertLedger = field(init=False)

    busy: ClassVar[str] = "another poll of this subscription is in progress"
    ttl: ClassVar[int] = POLL_LEDGER_TTL  # retried a few times, then closed: the next period polls again

    def __post_init__(self) -> None:
        self.ledger = AlertLedger(self.store)

    def job(self, poll: AlertPoll) -> Job:
        # One poll of a subscription at a time: the lock is the subscription's, not the poll's.
        lock = self.store.k("alertlock", poll.platform, poll.channel, poll.repo.lower())
        return Job("alert", to_dict(poll), (poll.key,), lock, done=poll.key + ":done", attempts=poll.key + ":attempts")

    def what(self, poll: AlertPoll) -> str:
        return f"alert poll of {poll.repo} for {poll.platform}:{poll.channel}"

    async def _subscription(self, poll: AlertPoll) -> Subscription | None:
        mine = [
            s
            for s in await self.subs.for_channel(poll.platform, poll.channel)
            if s.repo.lower() == poll.repo.lower() and alerting(s)
        ]
        return sorted(mine, key=lambda s: s.weekly)[0] if mine else None  # the daily one first

    async def work(self, poll: AlertPoll) -> str:
        sub = await self._subscription(poll)
        if sub is None:
            return "alerts off"
        ledger, store, builder = self.ledger, self.store, self.builder
        now = self.clock()
        since = await ledger.since(sub.platform, sub.channel, sub.repo)
        if since is None:  # switched on by a subscriptions file, or the cursor lapsed: from now on
            await ledger.start(sub.platform, sub.channel, sub.repo, now)
            return "started"
        on, polled, tip = since
        tz = zone(sub.tz)
        source = self.sources.get(sub.repo)
        branch = sub.branch or await source.default_branch()
        several = is_several(branch)  # `branch main release/*`: listed by date, each commit once
        try:
            head: str | None = None if several else (await source.resolve_ref(branch)).sha
        except NotFoundError:  # an empty repository (or a missing branch: the listing says which)
            head = None
        # What the branch gained since the head the last poll saw, whatever the commits' dates (a
        # push of commits made hours ago is new too); by committer date only when there is no such
        # head yet, or the branch was rewritten.
        pushed = await source.pushed_since(tip, head, self.settings.include_merges) if tip and head else None
        start = max(on, polled - LOOKBACK)
        window = Window(
            start.astimezone(tz), (now + AHEAD).astimezone(tz), sub.tz, now.astimezone(tz).date().isoformat()
        )
        followed = Followed([])
        if pushed is not None:
            listed = pushed
        else:
            followed = await list_followed(
                source, window, branch, self.settings.include_merges, lambda sha: builder.files(source, sha)
            )
            listed = followed.commits
        # Never a commit from before alerts were switched on: a merged branch's old commits are history.
        commits = [c for c in listed if c.committed_at >= on]
        by = author_filter_of(sub)
        if by:
            commits = [c for c in commits if by.keeps(c.author, c.login)]
        paths = path_filter_of(sub)
        if paths and commits:
            files = await asyncio.gather(*(builder.files(source, c.sha) for c in commits))
            commits = [c for c, f in zip(commits, files) if paths.keeps(touched_paths(f))]
        commits.reverse()  # oldest first: alerts read in the order the commits landed
        keys = [ledger.sent_key(sub.platform, sub.channel, sub.repo, c.sha) for c in commits]
        states = await asyncio.gather(*(store.get_json(k) for k in keys))
        todo = [(c, k, s or {}) for c, k, s in zip(commits, keys, states) if not (s or {}).get("done")]
        sent = over = 0
        platform = self.platforms[sub.platform]
        hour = store.k("alerthour", sub.platform, sub.channel, sub.repo.lower(), now.strftime("%Y%m%d%H"))
        alerted = await store.smembers(hour + ":alerted")
        for commit, key, state in todo:
            digest = await self._digest(source, sub, branch, window, commit, listed, followed)
            entry = digest.entries[0]
            if entry.importance is not Importance.HIGH:
                continue  # looked at again while inside a poll's window: costs a cache read
            if state.get("alerted") or commit.sha in alerted or len(alerted) < self.settings.alert_max_per_hour:
                if commit.sha not in alerted:  # the hour's count first: a crash after it is a resumption
                    await store.sadd(hour + ":alerted", commit.sha)
                    await store.expire(hour + ":alerted", 2 * 3600)
                    alerted.add(commit.sha)
                await self._send_once(platform, sub.channel, CommitDetail(digest, entry), key, state, digest=digest)
                sent += 1
            else:
                await store.sadd(hour + ":over", commit.sha)
                await store.expire(hour + ":over", 2 * 3600)
                await store.set_json(key, {"done": True, "over": True, "at": now.timestamp()}, ttl=ALERT_TTL)
                over += 1
        counted = await self._count_the_rest(platform, sub, source.name, hour)
        await ledger.polled(sub.platform, sub.channel, sub.repo, Cursor(on, now, head or tip))
        parts = ([f"sent {sent}"] if sent else []) + ([f"counted {over} more"] if over else [])
        parts += ["count told"] if counted else []
        return ", ".join(parts) or "nothing new"

    async def _digest(
        self, source, sub: Subscription, branch: str, window: Window, commit: Commit, siblings, followed: Followed
    ) -> Digest:
        """The commit as a one-entry digest, analysed through the digests' cache (one LLM call at
        most, shared) with the readers' level corrections laid over it. A subscription that names
        its branch (or several) has the alert name the branch the commit landed on."""
        try:
            entry = DigestEntry(commit, await self.builder.analysis(source, commit, sub.lang, siblings))
        except BotError as exc:
            entry = DigestEntry(commit, None, error=localize(exc, sub.lang))
        if followed.on:
            entry = on_branches(entry, followed)
            branch = " ".join(entry.branches) or branch
        elif sub.branch:
            entry = replace(entry, branches=(branch,))
        digest = Digest(
            repo=source.name,
            branch=branch,
            window=window,
            lang=sub.lang,
            entries=(entry,),
            repo_url=source.web_url,
            links=source.links,
            generated_at=self.clock(),
            repo_spec=sub.repo,
        )
        return await self.builder.corrected(digest, scope_of(sub.platform, sub.channel))

    async def _count_the_rest(self, platform, sub: Subscription, name: str, hour: str) -> bool:
        """The hour's one message counting the high commits over the limit: sent once, edited as
        the count grows. True when it was sent or edited now."""
        store = self.store
        over = len(await store.smembers(hour + ":over"))
        if not over:
            return False
        told = await store.get_json(hour + ":more") or {}
        notice = Notice(
            text(
                sub.lang,
                "alerts.more_one" if over == 1 else "alerts.more",
                n=over,
                repo=name,
                max=self.settings.alert_max_per_hour,
            ),
            "info",
            sub.lang,
        )
        if not told.get("done"):
            ref = await self._send_once(platform, sub.channel, notice, hour + ":more", told)
            await store.set_json(hour + ":more:n", over, ttl=2 * 3600)
            return ref is not None
        if (await store.get_json(hour + ":more:n") or 0) >= over or not told.get("id"):
            return False
        await platform.update(MessageRef(sub.channel, told["id"]), notice)
        await store.set_json(hour + ":more:n", over, ttl=2 * 3600)
        return True

    async def _send_once(
        self, platform, channel: str, content, key: str, state: dict, digest: Digest | None = None
    ) -> MessageRef | None:
        """Send `content` once under `key` (bot/delivery/once.py); None when not sent now. A commit's
        alert (`digest` given) is marked `alerted` in its state: the next digest reads the mark."""
        return await send_once(
            self.store,
            self.threads,
            platform,
            channel,
            content,
            key,
            now=lambda: self.clock().timestamp(),
            ttl=ALERT_TTL,
            what="alert",
            digest=digest,
            state=state,
            mark={"alerted": True} if digest is not None else None,
        )

"""One watch's run for one day, exactly once per person and commit.

The clock (bot/runtime/schedule.py) makes a `WatchRun` when a watch is due: the day before the run, in
the person's time zone. The run lists that day's commits, keeps those whose files match the
pattern (the files come from the cache the digests fill), analyses them through the digests'
own cached path (`DigestBuilder.analysis`: a commit a digest already analysed costs no LLM call,
and one being analysed for a digest right now is shared), and sends the person a header line
then one message per commit, whose thread takes questions like a digest's.

At most one message per commit per person, even across a crash: every send is keyed, as a
delivery's are (bot/delivery/post.py). Before a send, a state under (person, repository, commit)
records that it is being tried and when; after it, that it is done. A run killed in between is
run again (the queue's lease, or the clock's next tick) and re-sends with the same key, which the
platform recognises (Slack: the key in the message's metadata; Feishu: the `uuid`, for an hour;
after that the conversation is read back, and a message that cannot be found out is not sent
again). Runs of one person's watches never overlap (a lease per person), so a state found
"trying" is always a dead run's. Two watches of one person that match the same commit send it once.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from ..channels.threads import Threads
from ..core.chat_platform import CommitDetail, MessageRef, Notice
from ..core.models import BotError, Commit, Digest, DigestEntry, to_dict
from ..core.tenants import scope_of
from ..core.window import day_window
from ..delivery.once import Job, JobRunner, send_once
from ..delivery.spec import LEDGER_TTL
from ..digest.builder import DigestBuilder
from ..digest.pathfilter import PathFilter, touched_paths
from ..i18n import localize, text
from ..sources.opened import Sources
from .spec import WatchRun

log = logging.getLogger(__name__)

MAX_MESSAGES = 50  # commit messages per watch and day: a pattern like `**` must not flood a person


@dataclass(eq=False)
class WatchRunner(JobRunner[WatchRun]):
    sources: Sources
    builder: DigestBuilder
    threads: Threads

    busy: ClassVar[str] = "another run of this person's watches is in progress"

    def job(self, run: WatchRun) -> Job:
        # One run of a person's watches at a time: the lock is the person's, not the run's.
        lock = self.store.k("watchlock", run.platform, run.user)
        return Job("watch", to_dict(run), (run.key,), lock, done=run.key + ":done", attempts=run.key + ":attempts")

    def what(self, run: WatchRun) -> str:
        return f"watch {run.repo} {run.glob} for {run.platform}:{run.user}"

    async def work(self, run: WatchRun) -> str:
        store = self.store
        platform = self.platforms[run.platform]
        builder = self.builder
        source = self.sources.get(run.repo)
        window = day_window(date.fromisoformat(run.day), run.tz)
        branch = await source.default_branch()
        commits = await source.list_commits(window, branch, self.settings.include_merges)
        files = await asyncio.gather(*(builder.files(source, c.sha) for c in commits))
        pattern = PathFilter(paths=(run.glob,))  # the digests' `paths` matcher
        matched = [c for c, f in zip(commits, files) if pattern.keeps(touched_paths(f))]
        matched.reverse()  # oldest first: the messages read in the order the commits landed
        states = await asyncio.gather(*(store.get_json(self._sent_key(run, c)) for c in matched))
        todo = [c for c, state in zip(matched, states) if not (state or {}).get("done")]
        if not todo:
            return "nothing new"
        shown = todo[-MAX_MESSAGES:]  # the most recent ones
        entries = await asyncio.gather(*(self._entry(source, c, run.lang, commits) for c in shown))
        header = text(
            run.lang,
            "watch.dm_header" if len(todo) > 1 else "watch.dm_header_one",
            n=len(todo),
            glob=run.glob,
            repo=source.name,
            label=window.label,
        )
        if len(shown) < len(todo):
            header += " " + text(run.lang, "watch.dm_cut", shown=len(shown))
        await self._send_once(platform, run.channel, Notice(header, "info", run.lang), run.key + ":header")
        for entry in entries:
            digest = Digest(  # with the readers' level corrections, as every digest shows them
                repo=source.name,
                branch=branch,
                window=window,
                lang=run.lang,
                entries=(entry,),
                repo_url=source.web_url,
                links=source.links,
                generated_at=self.clock(),
                repo_spec=run.repo,
            )
            digest = await builder.corrected(digest, scope_of(run.platform, run.channel or run.user))
            entry = digest.entries[0]
            await self._send_once(
                platform, run.channel, CommitDetail(digest, entry), self._sent_key(run, entry.commit), digest=digest
            )
        return f"sent {len(shown)}"

    async def _entry(self, source, commit: Commit, lang: str, siblings) -> DigestEntry:
        """The commit's analysis through the digests' cache (one LLM call at most, shared)."""
        try:
            return DigestEntry(commit, await self.builder.analysis(source, commit, lang, siblings))
        except BotError as exc:
            return DigestEntry(commit, None, error=localize(exc, lang))

    def _sent_key(self, run: WatchRun, commit: Commit) -> str:
        return self.store.k("watchsent", run.platform, run.user, run.repo.lower(), commit.sha)

    async def _send_once(
        self, platform, channel: str, content, key: str, digest: Digest | None = None
    ) -> MessageRef | None:
        """Send `content` once under `key` (bot/delivery/once.py); None when it was sent before or
        cannot be known to be missing. A commit message's thread is remembered for questions."""
        return await send_once(
            self.store,
            self.threads,
            platform,
            channel,
            content,
            key,
            now=lambda: self.clock().timestamp(),
            ttl=LEDGER_TTL,
            what="watch message",
            digest=digest,
        )

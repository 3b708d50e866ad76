"""The improve pass: a kept digest's fallbacks retried, the digest improved in place, and every
place it was shown redrawn once per improvement.

Who and when: the clock (`run`, `clock`) looks at `improve:due` every tick and hands each due
digest to the job queue as one "improve" job (inline when there is no queue); a digest is due
DIGEST_IMPROVE_MINUTES after it was kept, then after every pass that left something to do, for
at most DIGEST_IMPROVE_ATTEMPTS retries. Readers never wait for it: they read the kept digest.

One pass, safe to kill at any point and to run in several processes:
  1. a lease on the digest (one pass at a time; a dead runner's lapses) and the next due time
     set first, so a killed pass is picked up again after the interval;
  2. the fallback entries (and a fallback headline) made again through the analysis cache — an
     analysis that succeeds is cached at once, so a pass killed after it costs no second call;
  3. the kept digest replaced by compare-and-set on its revision (a racing writer wins, this
     pass stops): improved entries carry their note, the notices are counted again;
  4. the places behind the kept revision redrawn (a chat message edited only if something it
     shows changed), each marked drawn after its edit: a kill between the two repeats that one
     edit with the same content, never another.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial

from ..core.chat_platform import MessageRef
from ..core.models import BotError, Digest, digest_from_dict, to_dict
from ..core.tenants import scope_of
from ..core.window import zone
from ..delivery.once import Job, JobQueue, JobRunner, held, run_or_queue
from ..delivery.posted import PostedMessages
from ..digest.builder import DigestBuilder
from ..digest.kept import Kept
from ..digest.refresh import changed, compose, improved, refresh, refresh_content, retryable, succeeded
from ..levels.overlay import overlay_content
from ..report import archive
from ..sources.opened import Sources
from ..taste.corrections import Corrections

log = logging.getLogger(__name__)

LEASE = 60  # seconds a pass holds its digest without renewing (renewed every third of it)
DUE_PER_TICK = 20  # digests handed on per clock tick: a backlog drains over the next ticks
REDRAW_FAILS = 3  # a place whose redraw failed this often is left as it is (logged)


@dataclass(eq=False)
class Improver(JobRunner[str]):
    """A kept digest's improve pass, keyed by the digest's key."""

    sources: Sources
    builder: DigestBuilder
    corrections: Corrections | None
    kept: Kept = field(init=False)
    posted: PostedMessages = field(init=False)

    def __post_init__(self) -> None:
        self.kept = Kept(self.store)
        self.posted = PostedMessages(self.store)

    @property
    def every(self) -> int:
        return int(self.settings.digest_improve_minutes * 60)

    def job(self, key: str) -> Job:
        """No done key: a digest that needs no more passes is no longer due (bot/digest/kept.py)."""
        return Job("improve", key, (key,), key + ":improving")

    async def tick(self, now: datetime, jobs: JobQueue | None = None) -> list[tuple[str, str]]:
        """Hand on every digest due by `now`: one keyed job each (a second clock enqueues the same
        job), or run here one after the other without a queue."""
        if self.every <= 0:
            return []
        done = []
        for key, at in await self.kept.due(int(now.timestamp()), DUE_PER_TICK):
            job = replace(self.job(key), id=(key, at))  # each time it is due is a job of its own
            done.append((key, await run_or_queue(self.store, jobs, job, partial(self.run, key, now))))
        return done

    async def run(self, key: str, now: datetime | None = None) -> str:
        """One pass over the kept digest `key`; what happened, for logs and tests."""
        now = now or datetime.now(UTC)
        async with held(self.store, self.job(key).lock, LEASE) as owner:
            if owner is None:
                return "busy"
            return await self._pass(key, now)

    async def _pass(self, key: str, now: datetime) -> str:
        claimed = int(now.timestamp()) + max(self.every, 1)
        await self.kept.schedule(key, claimed)  # a pass killed from here on runs again then
        data = await self.store.get_json(key)
        if not data:
            await self.kept.forget(key)  # expired (DIGEST_CACHE_TTL): nothing left to improve
            return "gone"
        digest = digest_from_dict(data)
        meta = data.get("improve") or {}
        attempts = int(meta.get("attempts") or 0)
        outcome = "no retries"
        if self._work(digest) and attempts < self.settings.digest_improve_attempts:
            made = await self._retry(key, digest, meta, now)
            if made is None:
                return "changed meanwhile"  # another writer's revision stands; the next pass starts from it
            digest, meta, outcome = made
            attempts = meta["attempts"]
        behind = await self._redraw(key, digest, meta.get("renamed") or {})
        more = self._work(digest) and attempts < self.settings.digest_improve_attempts
        if not more and not behind:
            await self.kept.finished(key, claimed)
        return outcome + (f", {behind} redraws pending" if behind else "")

    def _work(self, digest: Digest) -> bool:
        fallback_headline = digest.headline_origin == "fallback" and self.builder.llm is not None
        return fallback_headline or any(retryable(e) for e in digest.entries)

    async def _retry(self, key: str, digest: Digest, meta: dict, now: datetime) -> tuple[Digest, dict, str] | None:
        todo = [e for e in digest.entries if retryable(e)]
        source = self.sources.get(digest.repo_spec or digest.repo)
        problems: list = []
        siblings = [e.commit for e in digest.entries]
        again = await self.builder.retry(source, [e.commit for e in todo], digest.lang, siblings, problems)
        at = now.astimezone(zone(digest.window.tz)).isoformat(timespec="minutes")
        better = {old.commit.sha: improved(old, new, at) for old, new in zip(todo, again) if succeeded(new)}
        entries = tuple(better.get(e.commit.sha, e) for e in digest.entries)
        new = replace(digest, entries=entries)
        failed = digest.headline_fallback
        if digest.headline_origin == "fallback" and self.builder.llm is not None:
            bullets, origin, _why = await self.builder.headline(entries, digest.lang)
            if origin == "llm":
                new = replace(new, headline=tuple(bullets), headline_origin="llm", headline_fallback="")
                failed = ""
        head = new.headline_origin != digest.headline_origin
        window = digest.window
        parts = self.builder.notice_parts(source, entries, digest.lang, window, problems, failed)
        before = meta.get("parts") or {}
        now_renamed = {before[k]: parts.get(k, "") for k in before if before[k] and before[k] != parts.get(k, "")}
        renamed = compose(meta.get("renamed") or {}, now_renamed)
        notices = tuple(n for n in (now_renamed.get(x, x) for x in digest.notices) if n)
        notices += tuple(parts[k] for k in ("source", "llm", "headline") if parts.get(k) and parts[k] not in notices)
        better_any = bool(better or head)
        new = replace(new, notices=notices, revision=digest.revision + (1 if better_any else 0))
        new_meta = {"attempts": int(meta.get("attempts") or 0) + 1, "parts": parts, "renamed": renamed}
        out = to_dict(new) | {"improve": new_meta}
        if not await self.store.set_json_if(key, out, "revision", digest.revision):
            return None
        if better:
            log.info("%s %s: %d fallback analyses improved", digest.repo, digest.window.label, len(better))
        outcome = f"{len(better)} of {len(todo)} improved" + (", headline improved" if head else "")
        return new, new_meta, outcome

    async def _redraw(self, key: str, digest: Digest, renamed: Mapping[str, str]) -> int:
        """Redraw every place behind the kept revision; how many are still behind."""
        if digest.revision == 0:
            return 0  # never improved: every place shows it as it is
        await self.kept.set_revision(key, digest.revision)
        behind = 0
        effective: dict[str, dict] = {}  # a posted place's workspace scope → its corrections
        for place, state in (await self.kept.places(key)).items():
            if int(state.get("rev") or 0) >= digest.revision:
                continue
            kind, *where = json.loads(place)
            try:
                if kind == "report":
                    await self._redraw_report(where[0], digest, renamed)
                else:
                    platform, channel, message_id = where
                    scope = scope_of(platform, channel)  # the message's own workspace's corrections
                    if scope not in effective and self.corrections is not None:
                        effective[scope] = await self.corrections.effective(digest.repo, scope)
                    shows = effective.get(scope) or {}
                    if not await self._redraw_posted(platform, channel, message_id, digest, renamed, shows):
                        behind += 1  # its platform is served by another process
                        continue
            except BotError as exc:
                fails = int(state.get("fails") or 0) + 1
                log.warning("could not redraw %s with the improved digest (%d): %s", place, fails, exc)
                if fails < REDRAW_FAILS:
                    behind += 1
                    await self.kept.drawn(key, place, int(state.get("rev") or 0), fails)
                    continue
            await self.kept.drawn(key, place, digest.revision)
        return behind

    async def _redraw_posted(
        self, platform_name: str, channel: str, message_id: str, kept: Digest, renamed, effective
    ) -> bool:
        platform = self.platforms.get(platform_name)
        if platform is None:
            return False
        posted = await self.posted.get(platform_name, channel, message_id)
        if posted is None:
            return True  # no longer kept (older than a message can be edited): nothing to redraw
        content = refresh_content(posted.content, kept, renamed)
        if content is None:
            return True  # shows nothing that changed: left alone
        content = overlay_content(content, effective)
        ref = MessageRef(channel, posted.parts[0], posted.thread, parts=posted.parts)
        if await platform.revise(ref, content):
            await self.posted.replace(platform_name, channel, posted, content)
        else:
            log.info("message %s not redrawn with the improved digest: it would no longer fit as many messages", ref.id)
        return True

    async def _redraw_report(self, report_id: str, kept: Digest, renamed) -> None:
        shown = await archive.load(self.store, report_id)
        left = await archive.remaining(self.store, report_id)
        if shown is None or left is None:
            return  # the link has expired
        new = refresh(shown, kept, renamed)
        if changed(shown, new):
            await archive.keep(self.store, report_id, new, left)

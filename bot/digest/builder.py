"""Build one repository's digest for a window: list → (cached) analyse in parallel → headline.

Through the cache: a finished window's digest is kept whole as first published, fallbacks and
notices included (bot/improve/ retries those later and improves it in place); each commit's
analysis is stored by (repo, sha, model+prompt hash, language), so re-running a day costs no LLM
call and no diff fetch. One commit failing never loses the rest: it gets the offline analysis, or says why not.

One analysis per commit, whatever the readers' languages: a commit is analysed once, its texts
written in every language the repository is read in (bot/digest/readers.py) by the same request
(offline: in both languages, always); a language asked later gets the texts of the analysis
already made, translated (bot/analysis/translate.py), its level and type unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from settings import Settings

from ..analysis import cost
from ..analysis.offline import analyse_offline
from ..analysis.repo_config import load_profile
from ..analysis.summary import headline as build_headline
from ..analysis.summary import headline_notice
from ..core import metrics, reader_work
from ..core.models import (
    Analysis,
    BotError,
    Commit,
    Cost,
    Digest,
    DigestEntry,
    FileChange,
    RateLimited,
    Window,
    analysis_from_dict,
    commit_from_dict,
    digest_from_dict,
    to_dict,
)
from ..core.store import ANALYSIS_TTL, Store, StoreUnavailable
from ..i18n import LANGS, localize, text
from ..levels.overlay import overlay
from ..sources import CommitSource
from ..sources.branches import list_followed
from .authorfilter import AuthorFilter
from .branch_marks import on_branches, one_branch_dict, twin_followed
from .commit_files import CommitFiles, expect_files
from .entry_owners import with_owners
from .kept import Kept
from .noise import is_bot
from .notices import llm_notice, profile_notice, source_notice
from .pathfilter import PathFilter, touched_paths
from .readers import Readers, translated_analysis, translated_headline
from .refresh import retryable
from .updates import update_lines

log = logging.getLogger(__name__)

Progress = Callable[[int, int], Awaitable[None] | None]
SHARED_FALLBACK_TTL = 60  # a fallback analysis is shared with concurrent askers only briefly


def utcnow() -> datetime:
    return datetime.now(UTC)


PROFILE_TTL = 3600.0  # seconds: an edited .digest.toml is picked up within the hour


class DigestBuilder:
    def __init__(
        self,
        store: Store,
        analyzer,
        llm,
        prompts,
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
        taste=None,
        corrections=None,
    ):
        self.store = store
        self.corrections = corrections  # bot.taste.corrections.Corrections: readers' level corrections
        self.taste = taste  # bot.taste.book.TasteBook: the repositories' learned profiles (None: rules alone)
        self.analyzer = analyzer
        self.llm = llm
        self.prompts = prompts
        self.settings = settings
        self.clock = clock
        self.commit_files = CommitFiles(store, settings.github_fetch_concurrency)
        self._profiles: dict[str, tuple[float, asyncio.Future]] = {}  # cache_id → (read at, (profile, problem))
        self.readers = Readers(store, lambda: self.clock().timestamp())  # the languages each repository is read in

    # --- public ----------------------------------------------------------------------------------
    async def build(
        self,
        source: CommitSource,
        window: Window,
        lang: str,
        branch: str | None = None,
        include_merges: bool | None = None,
        progress: Progress | None = None,
        paths: PathFilter | None = None,
        authors: AuthorFilter | None = None,
        scope: str = "",
    ) -> Digest:
        """`paths`: only the commits it keeps are analysed (their files are read first, so the
        commits it drops cost no LLM call); `authors` likewise, by who wrote them (nothing to
        read). The digest says the filters in its header; `scope`'s corrections laid over it."""
        include_merges = self.settings.include_merges if include_merges is None else include_merges
        branch = branch or await source.default_branch()
        await self.readers.note(source.cache_id, lang)
        cacheable = window.end <= self.clock() and self.settings.digest_cache_ttl > 0
        filt = paths or PathFilter()
        by = authors or AuthorFilter()
        key = self._digest_key(source, branch, window, lang, include_merges, filt, by)

        async def cached():
            data = (await self.store.get_json(key)) if cacheable else None
            if data and data.get("cost"):  # nothing is spent now: say so, and what it cost then
                data["cost"] = to_dict(cost.reused(Cost(**data["cost"]), len(data.get("entries") or ())))
            return data

        async def produce():
            metrics.count("cache", cache="digest", result="miss")
            with cost.metering() as meter:  # every LLM token of this build, the headline's too
                problems: list[BotError] = []
                # The same digest kept in another language: the same commits (not listed or
                # filtered again), and its headline, translated with the analyses' texts.
                twin = await self._twin(source, lang, (branch, window, include_merges, filt, by)) if cacheable else None
                followed = None
                if twin is not None:
                    commits = [commit_from_dict(e["commit"]) for e in twin["entries"]]
                    followed = twin_followed(twin)
                    filtered_out = int(twin.get("filtered_out") or 0)
                else:
                    followed = await list_followed(
                        source, window, branch, include_merges, lambda sha: self.files(source, sha)
                    )
                    listed = followed.commits
                    commits = [c for c in listed if by.keeps(c.author, c.login)] if by else listed
                    commits = await self._filter(source, commits, filt) if filt else commits
                    filtered_out = len(listed) - len(commits)
                translating = asyncio.ensure_future(translated_headline(self, source, twin, window.label, lang))
                try:
                    entries = await self._analyse_all(source, commits, lang, progress, problems)
                    if followed is not None and (
                        followed.on or followed.backport_of
                    ):  # several branches: which each is on
                        entries = [on_branches(e, followed) for e in entries]
                    self.analyzer.flush_translations(lang)  # the headline, if no analysis took it along
                    translated = await translating
                finally:
                    translating.cancel()
                entries, owners_problem = await with_owners(self.store, source, entries, self.files, lang)
                _profile, profile_problem = await self._read_profile(source)
                if translated is not None:
                    bullets, origin, headline_failed = translated, "llm", ""
                else:
                    bullets, origin, headline_failed = await self._headline(entries, lang)
            parts = self.notice_parts(source, entries, lang, window, problems, headline_failed)
            budget = cost.budget_said(meter, self.settings, self.clock(), lang)  # once, whatever it sent offline
            profile = profile_notice(profile_problem, lang) if profile_problem else ""
            notices = tuple(
                n for n in (parts["source"], parts["llm"], profile, owners_problem, budget, parts["headline"]) if n
            )  # the profile: the maintainers should hear that their .digest.toml is ignored
            spent = meter.cost(self.settings) if self.llm is not None else None
            if spent is not None:
                metrics.observe("digest_tokens", spent.tokens)
            digest = Digest(
                repo=source.name,
                branch=branch,
                window=window,
                lang=lang,
                entries=tuple(entries),
                headline=tuple(bullets),
                headline_origin=origin,
                repo_url=source.web_url,
                links=source.links,
                generated_at=self.clock(),
                repo_spec=getattr(source, "spec", source.name),
                notices=notices,
                headline_fallback=headline_failed,
                paths=filt.paths,
                exclude=filt.exclude,
                filtered_out=filtered_out,
                authors=by.authors,
                exclude_authors=by.exclude,
                cost=spent,
            )
            if not cacheable or meter.workspace_budget_hit:
                # one workspace's spent month is not kept for the others to read
                return to_dict(digest)
            return await self._keep(key, digest, parts)

        # Everyone asking for this digest at once (20 channels, two clocks' build jobs, any
        # process) shares one build, in flight as well as cached.
        with reader_work.building():  # background learning stands aside meanwhile (reader_work.py)
            digest = digest_from_dict(await self.store.single_flight(key, produce, cached=cached))
        return await self.corrected(digest, scope)

    async def _twin(self, source: CommitSource, lang: str, key_args: tuple) -> dict | None:
        """This finished window's digest kept in another language (same filters), if any."""
        branch, window, include_merges, filt, by = key_args
        for other in (x for x in LANGS if x != lang):
            kept = await self.store.get_json(self._digest_key(source, branch, window, other, include_merges, filt, by))
            if kept and kept.get("entries"):
                return kept
        return None

    async def _keep(self, key: str, digest: Digest, parts: dict[str, str]) -> dict:
        """Keep a finished window's digest as published, notices and fallbacks included: every
        later reader gets this one (a retry that succeeds later improves it in place, off the
        readers' path: bot/improve/). The first kept wins over a build racing it."""
        data = to_dict(replace(digest, kept_as=key))
        data["improve"] = {"attempts": 0, "parts": parts, "renamed": {}}
        if not await self.store.set_json(key, data, ttl=self.settings.digest_cache_ttl, nx=True):
            return await self.store.get_json(key) or data
        every = self.settings.digest_improve_minutes * 60
        if every > 0 and (any(retryable(e) for e in digest.entries) or digest.headline_origin == "fallback"):
            await Kept(self.store).schedule(key, int(self.clock().timestamp() + every), only_earlier=True)
        return data

    async def retry(
        self, source: CommitSource, commits: Sequence[Commit], lang: str, siblings: list[Commit], problems: list
    ) -> list[DigestEntry]:
        """The entries of `commits` made again, as a build makes them (through the analysis cache,
        the bounded pool): a kept digest's fallbacks retried by the improve pass (bot/improve/)."""
        slots = asyncio.Semaphore(self.settings.analysis_concurrency)

        async def one(commit: Commit) -> DigestEntry:
            async with slots:
                return await self._entry(source, commit, lang, siblings, problems)

        return list(await asyncio.gather(*(one(c) for c in commits)))

    async def headline(self, entries: Sequence[DigestEntry], lang: str) -> tuple[list[str], str, str]:
        """(bullets, origin, why it failed or ''): the day's headline, as a build makes it."""
        bullets, origin, failed = await self._headline(list(entries), lang)
        return list(bullets), origin, failed or ""

    async def _headline(self, entries: list[DigestEntry], lang: str) -> tuple[list[str], str, str]:
        """The day's headline, kept by what it is made from (the entries as the LLM reads them,
        the prompt, the model): the same commits with the same analyses get the headline they got
        before — a re-run of a day still open, or a window holding the same commits, asks the LLM
        nothing (and a process that only re-reads never imports its SDK)."""
        if self.llm is None or not entries:
            return await build_headline(self.llm, self.prompts, entries, lang)
        made_of = [self.llm.model, self.llm.endpoint_id, self.prompts.hash("day_headline", lang), lang]
        made_of.append([one_branch_dict(e) for e in entries])
        key = self.store.k("headline", hashlib.sha256(json.dumps(made_of, sort_keys=True).encode()).hexdigest()[:32])
        if (kept := await self.store.get_json(key)) is not None:
            return list(kept), "llm", ""
        bullets, origin, failed = await build_headline(self.llm, self.prompts, entries, lang)
        if origin == "llm" and not failed:
            await self.store.set_json(key, list(bullets), ttl=ANALYSIS_TTL)
        return bullets, origin, failed

    async def corrected(self, digest: Digest, scope: str = "") -> Digest:
        """Readers' level corrections as a conversation of `scope` sees them, laid over a digest
        after the cache: the cached digest (shared by every workspace) stays as the analyses made
        it, so no workspace's corrections are baked into another's, and later ones show too."""
        if self.corrections is None or not digest.entries:
            return digest
        return overlay(digest, await self.corrections.effective(digest.repo, scope))

    async def files(self, source: CommitSource, sha: str) -> tuple[FileChange, ...]:
        """A commit's files and patches, from the cache when another run already fetched them."""
        return await self.commit_files.get(source, sha)

    async def analysis(
        self, source: CommitSource, commit: Commit, lang: str, siblings: Sequence[Commit] = ()
    ) -> Analysis:
        """One commit's analysis through the cache (used by the digest and by Q&A): made once for
        every language the repository is read in; a language asked later is translated from it."""
        profile = await self.profile(source)
        tag = await self._commit_tag(source, commit)
        key = self.store.analysis_key(source.cache_id, commit.sha, tag, lang)
        if cached := await self.store.get_json(key):
            metrics.count("cache", cache="analysis", result="hit")
            cost.note_analysis(cached=True)
            return analysis_from_dict(cached)
        made = []

        async def produce():
            made.append(True)
            metrics.count("cache", cache="analysis", result="miss")
            translated, tried = (
                await translated_analysis(self, source, commit, tag, lang) if self.llm else (None, False)
            )
            if translated is not None:
                return {lang: translated}
            # Independent reads, done together: each is a round trip to the source.
            files, pr_body, reverted = await asyncio.gather(
                self.files(source, commit.sha), self._pr_body(source, commit), self._reverted(source, commit, siblings)
            )
            judgement = await self._judge(source, commit, files) if await self._taste_tag(source, commit) else None
            # the languages it is read in, unless another language's analysis is there already
            # (its translation failed: this language alone is asked for)
            langs = await self.readers.languages(source.cache_id, lang) if self.llm and not tried else (lang,)
            try:
                results = await self.analyzer.analyse_langs(
                    commit, files, langs, pr_body=pr_body, reverted=reverted, profile=profile, judgement=judgement
                )
            except BotError as exc:
                metrics.count("llm_fallbacks", reason=type(exc).__name__)
                results = {
                    lang: analyse_offline(
                        commit, files, lang, origin="fallback", note=str(exc), profile=profile, judgement=judgement
                    )
                }
            out = {}
            for code, result in results.items():
                data = to_dict(result)
                # A fallback is retried next time, not frozen in the cache; so is an analysis the
                # month's budget sent offline (it is kept under the LLM's key).
                if result.origin != "fallback" and result.fallback_reason != "budget":
                    await self.store.set_json(
                        self.store.analysis_key(source.cache_id, commit.sha, tag, code), data, ttl=ANALYSIS_TTL
                    )
                out[code] = data
            return out

        async def mine():
            data = await self.store.get_json(key)
            return {lang: data} if data else None

        # A commit being analysed for one request is shared with every other that needs it, in
        # any language: one flight per commit. A flight made for other languages than this one
        # (this language was not known to be read when it started) is followed by a translation.
        flight = self.store.analysis_key(source.cache_id, commit.sha, tag, "any")
        # (the cache was looked at just now: the flight's first look is skipped)
        data = await self.store.single_flight(
            flight, produce, cached=mine, shared_ttl=SHARED_FALLBACK_TTL, checked=True
        )
        if lang not in data:  # once more: this time the flight is this language's own
            data = await self.store.single_flight(flight, produce, cached=mine, shared_ttl=SHARED_FALLBACK_TTL)
        if lang not in data:  # a third language's flight won the race again: made here
            data = await produce()
        cost.note_analysis(cached=not made)  # another digest's (or an earlier) analysis cost this one nothing
        return analysis_from_dict(data[lang])

    async def note_reader(self, source: CommitSource, lang: str) -> None:
        """`source` is read in `lang` (a subscription made): its next analyses are written in it too."""
        await self.readers.note(source.cache_id, lang)

    async def uncached(self, source: CommitSource, commits: Sequence[Commit], lang: str) -> list[Commit]:
        """The commits whose analysis the cache holds in no language: what a request would have
        analysed (a language missing beside another costs a translation, not an analysis). One
        Redis round trip for all of them."""
        if not commits:
            return []
        tags = [await self._commit_tag(source, c) for c in commits]
        keys = [
            self.store.analysis_key(source.cache_id, c.sha, t, code) for c, t in zip(commits, tags) for code in LANGS
        ]
        held = await self.store.exists_each(keys)
        n = len(LANGS)
        return [c for i, c in enumerate(commits) if not any(held[i * n : (i + 1) * n])]

    async def _commit_tag(self, source: CommitSource, commit: Commit) -> str:
        """The cache tag of this commit's analyses: the analyzer's and the repository profile's.
        Not the learned profile that judged it: a commit judged while its day's profile was still
        being learnt (by an earlier day's, or the rules alone) keeps that judgement, so a later
        range, roll-up or question says of it what its digest said (one commit, one level). Whether
        learned profiles weigh in at all (LEARN_FROM_RELEASE_NOTES) is part of it: another setting,
        another judgement."""
        return await self._analysis_tag(source, "") + (":taste" if self.taste is not None else "")

    async def analyse_commits(
        self, source: CommitSource, commits: list[Commit], lang: str, progress: Progress | None = None
    ) -> list[DigestEntry]:
        """Analyses of any commits through the same cache, bounded pool and PR prefetch as a
        digest's (a question about a period shares the digests' work)."""
        return await self._analyse_all(source, commits, lang, progress, [])

    async def analysis_tag(self, source: CommitSource, lang: str) -> str:
        """What the cached analyses of `source` in `lang` are made by (keys of derived caches)."""
        return await self._analysis_tag(source, lang)

    async def cached_analysis(self, source: CommitSource, commit: Commit, lang: str) -> Analysis | None:
        """The commit's analysis if the cache holds one (the key `analysis()` uses); never makes
        one: a question about a period reads what the digests paid for and analyses only a few."""
        tag = await self._commit_tag(source, commit)
        key = self.store.analysis_key(source.cache_id, commit.sha, tag, lang)
        cached = await self.store.get_json(key)
        return analysis_from_dict(cached) if cached else None

    async def profile(self, source: CommitSource):
        """The repository's profile (`.digest.toml` on its default branch), read once per source;
        a bad one is logged in one sentence and the defaults are used."""
        return (await self._read_profile(source))[0]

    async def _read_profile(self, source: CommitSource):
        """(profile, problem): the problem is the sentence saying why the defaults are used."""
        now = time.monotonic()
        read_at, pending = self._profiles.get(source.cache_id, (0.0, None))
        if pending is None or now - read_at > PROFILE_TTL:
            pending = asyncio.ensure_future(load_profile(source))
            self._profiles[source.cache_id] = (now, pending)
        return await asyncio.shield(pending)

    async def _taste_tag(self, source: CommitSource, commit: Commit) -> str:
        """The learned profile's fingerprint for this commit's day ('' without one). A profile
        that cannot be learned (unreadable history, Redis busy) leaves the rules alone, logged."""
        if self.taste is None:
            return ""
        try:
            return await self.taste.tag(source, commit.committed_at)
        except BotError as exc:
            log.warning("%s: no learned profile for %s (%s)", source.name, commit.short_sha, exc)
            return ""

    async def _judge(self, source: CommitSource, commit: Commit, files):
        try:
            return await self.taste.judge(source, commit, files)
        except (BotError, ValueError) as exc:  # ValueError: scikit-learn found nothing to learn from
            log.warning("%s: no learned judgement for %s (%s)", source.name, commit.short_sha, exc)
            return None

    async def _analysis_tag(self, source, lang: str) -> str:
        """The analyzer's tag, plus the repository profile's fingerprint when it has one."""
        fingerprint = (await self.profile(source)).fingerprint()
        return self.analyzer.tag(lang) + (f":profile-{fingerprint}" if fingerprint else "")

    # --- internals ---------------------------------------------------------------------------------
    def _digest_key(
        self, source, branch, window, lang, include_merges, filt: PathFilter, by: AuthorFilter | None = None
    ) -> str:
        tag = self.analyzer.tag(lang)
        if self.llm is not None:
            tag += ":" + self.prompts.hash("day_headline", lang)
        # noise-1: entries carry their bot updates; owners-1: their code owners; the filter makes another digest
        learned = "taste-1" if self.taste is not None else ""  # entries weighed by the learned profiles
        authors = by.key() if by else ""  # '' for none: an unfiltered digest keeps its key
        tag = hashlib.sha256(
            f"{tag}:{include_merges}:noise-1:owners-1:{filt.key()}{authors}{learned}".encode()
        ).hexdigest()[:16]
        # A range of refs is its two SHAs (its commits never change), whatever its dates
        start, end = (
            (window.base, window.head) if window.is_range else (window.start.isoformat(), window.end.isoformat())
        )
        return self.store.digest_key(source.cache_id, branch, start, end, window.tz, lang, tag)

    def notice_parts(
        self, source, entries, lang: str, window: Window, problems: list[BotError], headline_failed: str = ""
    ) -> dict[str, str]:
        """The notices a digest's entries and headline call for, by kind ('' for none): counted
        again when an improve pass changes the entries, so they are made in one place."""
        limited = [p for p in problems if isinstance(p, RateLimited)]
        until = max((p.until for p in limited if p.until), default=None)
        if limited:
            log.warning(
                "%s: GitHub's rate limit left %d of %d commits unread (%s)",
                source.name,
                sum(1 for e in entries if e.error),
                len(entries),
                limited[0],
            )
        headline = ""
        if headline_failed and headline_failed not in _fallback_reasons(entries):
            # the LLM failed at the headline in a way the analyses' notice does not say already
            headline = headline_notice(headline_failed, lang)
        return {
            "source": source_notice(entries, lang, until, window.tz, reason=problems[0] if problems else "") or "",
            "llm": (llm_notice(entries, lang) or "") if self.llm is not None else "",
            "headline": headline,
        }

    async def _analyse_all(
        self, source, commits: list[Commit], lang: str, progress: Progress | None, problems: list[BotError]
    ) -> list[DigestEntry]:
        done = 0
        total = len(commits)
        await _notify(progress, 0, total)
        await self._prefetch_prs(source, commits, lang)
        absent = await self.commit_files.look(source, commits)

        slots = asyncio.Semaphore(self.settings.analysis_concurrency)

        async def one(commit: Commit) -> DigestEntry:
            nonlocal done
            async with slots:  # bounded fan-out: a 1,000-commit day holds ANALYSIS_CONCURRENCY at a time
                entry = await self._entry(source, commit, lang, commits, problems)
            done += 1
            await _notify(progress, done, total)
            return entry

        try:
            return list(await asyncio.gather(*(one(c) for c in commits)))
        finally:
            self.commit_files.forget(absent)

    async def _filter(self, source, commits: list[Commit], filt: PathFilter) -> list[Commit]:
        """The commits the path filter keeps, read before any analysis. A commit whose files
        cannot be read is kept: it is shown with the reason rather than silently dropped."""
        slots = asyncio.Semaphore(self.settings.analysis_concurrency)
        expect_files(source, commits)

        async def keep(commit: Commit) -> bool:
            async with slots:
                files = await self._readable_files(source, commit)
            return files is None or filt.keeps(touched_paths(files))

        kept = await asyncio.gather(*(keep(c) for c in commits))
        return [c for c, k in zip(commits, kept) if k]

    async def _updates(self, source, commit: Commit) -> tuple[str, ...]:
        """A bot commit's `name old → new` lines, for its collapsed bot line (bot/digest/noise.py)."""
        files = await self._readable_files(source, commit)  # cached: the analysis just read them
        try:
            return update_lines(commit, files or ())
        except Exception:  # a line of decoration must never sink the digest
            log.exception("reading the updates of %s failed", commit.short_sha)
            return ()

    async def _readable_files(self, source, commit: Commit) -> tuple[FileChange, ...] | None:
        """The commit's files; None when its source cannot read them (Redis away stops the build)."""
        try:
            return await self.files(source, commit.sha)
        except StoreUnavailable:
            raise
        except BotError:
            return None

    async def _entry(self, source, commit: Commit, lang: str, siblings, problems: list[BotError]) -> DigestEntry:
        code = "source"
        try:
            entry = DigestEntry(commit, await self.analysis(source, commit, lang, siblings))
            if is_bot(commit.author):
                entry = replace(entry, updates=await self._updates(source, commit))
            return entry
        except StoreUnavailable:  # not the source failing: a fallback saying "Redis is unreachable" would
            raise  # be kept and shared by every delivery; the build stops and its delivery runs again
        except BotError as exc:
            reason = localize(exc, lang)  # the source's sentence, in the digest's language
            problems.append(exc)
            code = "rate_limited" if isinstance(exc, RateLimited) else "source"
        except Exception as exc:  # one commit must never sink the digest; the log has the details
            log.exception("analysing %s %s failed", source.name, commit.short_sha)
            reason = text(lang, "errors.internal_short", kind=type(exc).__name__)
        # The diff could not be read: say so, with what the listing alone tells.
        fallback = analyse_offline(commit, (), lang, origin="fallback", note=reason)
        return DigestEntry(commit, replace(fallback, coverage=None, fallback_reason=code), error=reason)

    async def _prefetch_prs(self, source, commits: list[Commit], lang: str) -> None:
        """The PRs of the commits still to analyse, in bulk (the source batches them)."""
        with_pr = [c for c in commits if c.pr_number]
        if not with_pr:
            return
        tag = await self._analysis_tag(source, lang)
        keys = [self.store.analysis_key(source.cache_id, c.sha, tag, lang) for c in with_pr]
        cached = await self.store.exists_each(keys)
        todo = [c for c, hit in zip(with_pr, cached) if not hit]
        if todo:
            try:
                await source.prefetch_prs(todo)
            except BotError as exc:
                log.info("PR prefetch for %s skipped: %s", source.name, exc)  # one by one, later

    async def _pr_body(self, source, commit: Commit) -> str | None:
        if not commit.pr_number:
            return None
        try:
            return await source.pr_description(commit.pr_number)
        except BotError:
            return None  # context only: the analysis goes on without it

    async def _reverted(self, source, commit: Commit, siblings: Sequence[Commit]) -> Commit | None:
        if not commit.reverts:
            return None
        for other in siblings:
            if other.sha.startswith(commit.reverts):
                return other
        try:
            return await source.get_commit(commit.reverts)
        except BotError:
            return None


def _fallback_reasons(entries: Sequence[DigestEntry]) -> set[str]:
    return {e.analysis.fallback_reason for e in entries if e.analysis and e.analysis.origin == "fallback"}


async def _notify(progress: Progress | None, done: int, total: int) -> None:
    if progress is None:
        return
    result = progress(done, total)
    if inspect.isawaitable(result):
        await result

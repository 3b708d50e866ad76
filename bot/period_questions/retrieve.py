"""The commits of a period, indexed, and the ones a question is about.

A commit's index row is built from the commit itself — title, message and PR text, touched paths
and the words of their directories, symbols from its diff — and from its analysis when the Redis
analysis cache already holds one (the digests paid for it); nothing is analysed to build the
index. The offline rules give a bare row its type and importance. Retrieval is BM25 over those
rows, limited to the period's commits on the branch; a question that names no topic gets the
period's commits by importance. After retrieval, `deepen` has the LLM analyse (through the
digests' own cached path) at most HISTORY_MAX_ANALYSES of the best matches not yet analysed, and
their rows are rebuilt: a question costs a bounded number of LLM calls, whatever the period's size.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
from collections.abc import Sequence

from settings import Settings

from ..analysis.offline import analyse_offline
from ..analysis.prompt_text import strip_bot_footers
from ..core.models import Analysis, BotError, Commit, FileChange, Window
from ..sources.branches import list_followed
from .answer_trace import Source
from .index import BARE, RETRY, RETRY_AFTER, Document, HistoryIndex, Hit
from .ranking import LIST_CUTOFF, TOP_K, best_of, by_importance
from .terms import Query, cjk_pairs, expand, path_parts, symbols

log = logging.getLogger(__name__)

BODY_CHARS = 20000  # message + PR text indexed per commit (release notes run long)
_CODE = re.compile(r"`([^`\n]{2,80})`")


class Retriever:
    def __init__(self, builder, index: HistoryIndex, settings: Settings):
        self.builder = builder
        self.index = index
        self.settings = settings

    async def commits(self, source, window: Window, branch: str | None = None) -> list[Commit]:
        branch = branch or await source.default_branch()  # several (`main release/*`): each commit once
        return (await list_followed(source, window, branch, self.settings.include_merges, backports=False)).commits

    async def prepare(self, source, commits: Sequence[Commit], lang: str, progress=None) -> int:
        """Index the commits whose row is missing or out of date, from the commit and whatever
        analysis the cache holds (none is made here); how many rows were written."""
        tag = await self.builder.analysis_tag(source, lang)
        states = await self.index.states(source.cache_id, lang, [c.sha for c in commits])
        todo = [c for c in commits if states.get(c.sha, ("", 0.0))[0] != tag]
        if not todo:
            return 0
        await _prefetch_prs(source, [c for c in todo if c.sha not in states])
        slots = asyncio.Semaphore(self.settings.analysis_concurrency)
        done = 0

        async def one(commit: Commit) -> Document | None:
            nonlocal done
            async with slots:
                analysis = await self.builder.cached_analysis(source, commit, lang)
                state = states.get(commit.sha, ("", 0.0))[0]
                doc = None
                if analysis is not None or state not in (tag + BARE, tag + RETRY):  # else: nothing new
                    doc = await self._document(source, commit, analysis, tag)
            done += 1
            await _notify(progress, done, len(todo))
            return doc

        docs = [d for d in await asyncio.gather(*(one(c) for c in todo)) if d is not None]
        await self.index.upsert(source.cache_id, lang, docs)
        return len(docs)

    async def unread(self, source, shas: Sequence[str], lang: str) -> list[str]:
        """Of `shas`, the ones whose row holds no analysis (a commit whose LLM analysis failed
        within RETRY_AFTER is not asked about again)."""
        tag = await self.builder.analysis_tag(source, lang)
        states = await self.index.states(source.cache_id, lang, shas)
        now = time.time()

        def fresh(state: tuple[str, float]) -> bool:
            return state[0] == tag or (state[0] == tag + RETRY and now - state[1] < RETRY_AFTER)

        return [sha for sha in shas if not fresh(states.get(sha, ("", 0.0)))]

    async def read_count(self, source, commits: Sequence[Commit], lang: str) -> int:
        """How many of `commits` have an analysis in their row."""
        tag = await self.builder.analysis_tag(source, lang)
        states = await self.index.states(source.cache_id, lang, [c.sha for c in commits])
        return sum(1 for tag_at in states.values() if tag_at[0] == tag)

    async def deepen(self, source, commits: Sequence[Commit], lang: str) -> int:
        """Have these commits analysed (through the digests' cache, bounded pool and PR
        prefetch: an LLM call each unless another run made it) and rebuild their rows."""
        if not commits:
            return 0
        tag = await self.builder.analysis_tag(source, lang)
        entries = await self.builder.analyse_commits(source, list(commits), lang)
        docs = [
            await self._document(source, e.commit, e.analysis, tag, failed=bool(e.error) or _fallback(e.analysis))
            for e in entries
        ]
        await self.index.upsert(source.cache_id, lang, docs)
        return len(docs)

    async def search(
        self,
        source,
        commits: Sequence[Commit],
        window: Window,
        lang: str,
        query: Query,
        limit: int = TOP_K,
        cutoff: float = LIST_CUTOFF,
    ) -> list[Source]:
        """The commits of `commits` the query is about, best first (at most `limit`, none under
        `cutoff` × the best score). A query with no terms: the period's commits by importance."""
        shas = [c.sha for c in commits]
        if query.empty:
            metas = await self.index.metas(source.cache_id, lang, shas)
            return by_importance([_source(Hit(sha, 0.0, meta), source.name) for sha, meta in metas.items()], limit)
        between = (window.start_utc.timestamp(), window.end_utc.timestamp())
        hits = await self.index.search(source.cache_id, lang, query.fts(), shas, limit, between)
        return best_of([_source(h, source.name) for h in hits], limit, cutoff)

    async def _document(
        self, source, commit: Commit, analysis: Analysis | None, tag: str, failed: bool = False
    ) -> Document:
        """The row of a commit: its own text, paths and symbols, and `analysis` when there is one
        (None: a bare row, its type and importance from the offline rules). `failed`: the
        analysis is a fallback (the LLM failed), used for RETRY_AFTER, then asked for again."""
        files: Sequence[FileChange] = ()
        try:
            files = await self.builder.files(source, commit.sha)
        except BotError as exc:
            log.info("%s %s: indexed without its files (%s)", source.name, commit.short_sha, exc)
            failed = failed or analysis is not None
        if analysis is None:
            tag += BARE
            meta_from = analyse_offline(commit, files, "en")  # type and importance: cheap rules
        else:
            tag += RETRY if failed else ""
            meta_from = analysis
        pr_body = await _pr_body(source, commit)
        paths = [p for f in files for p in (f.path, f.previous_path) if p]
        body = (strip_bot_footers(commit.body) + "\n" + (pr_body or ""))[:BODY_CHARS]
        named = _CODE.findall(f"{commit.title}\n{body}")
        analysis_text = ""
        if analysis is not None:
            analysis_text = "\n".join(
                [
                    analysis.summary,
                    analysis.importance_reason,
                    analysis.impact,
                    analysis.insights.architecture,
                    analysis.insights.performance,
                    analysis.insights.security,
                    *analysis.risks,
                ]
            )
        meta = {
            "title": commit.title,
            "url": commit.url,
            "summary": analysis.summary if analysis else "",
            "importance": meta_from.importance.value,
            "change_type": meta_from.change_type.value,
            "pr": commit.pr_number,
            "ts": commit.committed_at.timestamp(),
            "read": analysis is not None and not failed,
        }
        return Document(
            sha=commit.sha,
            committed_at=commit.committed_at.timestamp(),
            tag=tag,
            title=expand(commit.title),
            symbols=expand(" ".join(named + symbols([f.patch for f in files]))),
            paths=expand(" ".join(paths)),
            parts=path_parts(paths),
            summary=expand(analysis_text),
            body=expand(body),
            cjk=" ".join(cjk_pairs(f"{commit.title}\n{analysis_text}\n{body}")),
            meta=meta,
        )


def _source(hit: Hit, repo: str = "") -> Source:
    m = hit.meta
    return Source(
        sha=hit.sha,
        title=m.get("title", ""),
        url=m.get("url"),
        summary=m.get("summary", ""),
        importance=m.get("importance", "medium"),
        change_type=m.get("change_type", "other"),
        committed_at=m.get("ts", 0.0),
        score=hit.score,
        repo=repo,
        read=bool(m.get("read")),
    )


def _fallback(analysis: Analysis | None) -> bool:
    return analysis is None or analysis.origin == "fallback"


async def _notify(progress, done: int, total: int) -> None:
    if progress is not None and inspect.isawaitable(result := progress(done, total)):
        await result


async def _prefetch_prs(source, commits: Sequence[Commit]) -> None:
    with_pr = [c for c in commits if c.pr_number]
    if with_pr:
        try:
            await source.prefetch_prs(with_pr)
        except BotError as exc:
            log.info("PR prefetch for %s skipped: %s", source.name, exc)


async def _pr_body(source, commit: Commit) -> str | None:
    if not commit.pr_number:
        return None
    try:
        return await source.pr_description(commit.pr_number)
    except BotError:
        return None  # context only

"""The commits of a period, analysed and indexed, and the ones a question is about.

Every commit of the period gets its analysis through the digests' own path (the Redis analysis
cache, the bounded pool, the PR prefetch), so a question shares whatever the daily digests
already did and the digests later share what a question did. Analyses not yet in the index are
turned into index rows (title, touched symbols and paths, analysis text, message and PR text).
Retrieval is BM25 over those rows, limited to the period's commits on the branch; a question
that names no topic gets the period's commits by importance.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..analysis.hints import strip_bot_footers
from ..models import BotError, Commit, DigestEntry, FileChange, Window
from .index import RETRY, Document, HistoryIndex, Hit
from .terms import Query, cjk_pairs, expand, symbols

log = logging.getLogger(__name__)

TOP_K = 10  # commits retrieved for an answer (and for recall@10)
# A hit scoring under a share of the best one is left out: BM25 gives a commit that shares only a
# common word a small positive score. The model is given more (it judges relevance and cites only
# what answers; recall matters), the offline list less (it is the answer; precision matters). Both
# chosen on the tuning half of the labelled questions (bench/eval_history.py --tune: the list's
# cutoff has the best F1 there; the model's keeps nine in ten of the labelled commits).
CONTEXT_CUTOFF = 0.35
LIST_CUTOFF = 0.7
BODY_CHARS = 20000  # message + PR text indexed per commit (release notes run long)
_CODE = re.compile(r"`([^`\n]{2,80})`")


@dataclass(frozen=True)
class Source:
    """One retrieved commit: what the answer may cite and the Sources list shows."""

    sha: str
    title: str
    url: str | None
    summary: str
    importance: str
    change_type: str
    committed_at: float
    score: float
    repo: str = ""  # the repository's display name (the answer names it when it draws on several)

    @property
    def short_sha(self) -> str:
        return self.sha[:7]


class Retriever:
    def __init__(self, builder, index: HistoryIndex, settings):
        self.builder = builder
        self.index = index
        self.settings = settings

    async def commits(self, source, window: Window, branch: str | None = None) -> list[Commit]:
        branch = branch or await source.default_branch()
        return await source.list_commits(window, branch, self.settings.include_merges)

    async def prepare(self, source, commits: Sequence[Commit], lang: str, progress=None) -> int:
        """Analyse (through the cache) and index the commits not yet indexed; how many were."""
        tag = await self.builder.analysis_tag(source, lang)
        done = await self.index.indexed(source.cache_id, lang, [c.sha for c in commits], tag)
        missing = [c for c in commits if c.sha not in done]
        if not missing:
            return 0
        entries = await self.builder.analyse_commits(source, missing, lang, progress)
        await _prefetch_prs(source, missing)
        slots = asyncio.Semaphore(self.settings.analysis_concurrency)

        async def one(entry: DigestEntry) -> Document:
            async with slots:
                return await self._document(source, entry, tag)

        docs = await asyncio.gather(*(one(e) for e in entries))
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

    async def _document(self, source, entry: DigestEntry, tag: str) -> Document:
        commit, analysis = entry.commit, entry.analysis
        retry = bool(entry.error or analysis is None or analysis.origin == "fallback")  # not what the cache holds
        files: Sequence[FileChange] = ()
        if not entry.error:
            try:
                files = await self.builder.files(source, commit.sha)
            except BotError as exc:
                log.info("%s %s: indexed without its files (%s)", source.name, commit.short_sha, exc)
                retry = True
        tag += RETRY if retry else ""  # analysed again after RETRY_AFTER
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
            "importance": analysis.importance.value if analysis else "medium",
            "change_type": analysis.change_type.value if analysis else "other",
            "pr": commit.pr_number,
            "ts": commit.committed_at.timestamp(),
        }
        return Document(
            sha=commit.sha,
            committed_at=commit.committed_at.timestamp(),
            tag=tag,
            title=expand(commit.title),
            symbols=expand(" ".join(named + symbols([f.patch for f in files]))),
            paths=expand(" ".join(paths)),
            summary=expand(analysis_text),
            body=expand(body),
            cjk=" ".join(cjk_pairs(f"{commit.title}\n{analysis_text}\n{body}")),
            meta=meta,
        )


def best_of(found: Sequence[Source], limit: int, cutoff: float) -> list[Source]:
    """The best `limit` by score (of one repository's search or several merged), none under
    `cutoff` × the best score."""
    ranked = sorted(found, key=lambda s: -s.score)[:limit]
    if ranked and cutoff > 0:
        ranked = [s for s in ranked if s.score >= cutoff * ranked[0].score]
    return ranked


def by_importance(found: Sequence[Source], limit: int) -> list[Source]:
    """For a question that names no topic: high first, then the most recent."""
    rank = {"high": 0, "medium": 1, "low": 2}
    return sorted(found, key=lambda s: (rank.get(s.importance, 1), -s.committed_at))[:limit]


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
    )


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

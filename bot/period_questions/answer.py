"""Answer a question about a period: the period's commits (indexed from their own text and the
analyses already cached) → the relevant ones → at most HISTORY_MAX_ANALYSES of the best not yet
analysed are analysed, and the search runs again → the LLM, streamed, each claim citing a short
SHA → a Sources list built from the retrieval. The answer says how many of the period's commits
were read in full when not all were. A question costs at most HISTORY_MAX_ANALYSES + 2 LLM calls:
the analyses, the answer, and one corrective retry when its opening is a copy of a source's line
or in the wrong language (check.py); a second refusal gives the ranked list with a visible note.

The Sources list (short SHA, title, link) is written by the bot from the index: the retrieved
commits the answer cites (all it was given when it cites none), never text taken from the model;
a SHA the model cites that is not among its sources is replaced as it streams (cite.py). Without
an LLM, or when it fails, the answer is the ranked source list with each commit's one-line
summary. Nothing retrieved: one sentence saying nothing
in the period matches.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast
from zoneinfo import ZoneInfo

from settings import Settings

from ..analysis.language import language_name
from ..answers.commit_qa import HeadCheck, neutralise, stream_fitted
from ..core.models import BotError, Commit, Window
from ..diffs.tokens import estimate_tokens
from ..i18n import localize, text
from ..redact import redact_text
from .answer_trace import Source, Trace
from .check import JUDGE_CHARS, problem
from .cite import CitationGuard
from .ranking import CONTEXT_CUTOFF, LIST_CUTOFF, TOP_K, Retrieval, best_of, by_importance
from .terms import build_query

log = logging.getLogger(__name__)

HISTORY_TURNS = 6  # earlier turns (question + answer each) kept in the prompt
OUTPUT_TOKENS = 1024
PROMPT_MARGIN_TOKENS = 200
# How the prompt shrinks to fit a small window: (commits given, characters of each summary).
FIT_STEPS = ((10, 400), (10, 200), (6, 160), (4, 0))
SUMMARY_LINE_CHARS = 160  # the offline list's one-line summaries
JOB = "history"
RETRY_JOB = "history_retry"  # the corrective message after a refused answer
REFUSED = {"copy": "history.answer_copied", "language": "history.answer_wrong_language"}


class HistoryQA:
    def __init__(self, retriever: Retrieval, llm, prompts, settings: Settings):
        self.retriever = retriever
        self.llm = llm
        self.prompts = prompts
        self.settings = settings

    async def answer(
        self,
        targets,
        window: Window,
        question: str,
        lang: str,
        history: Sequence = (),
        branch: str | None = None,
        search: str | None = None,
        trace: Trace | None = None,
        progress=None,
    ) -> AsyncIterator[str]:
        """Yield the answer in pieces. `targets`: a commit source, or (source, branch) pairs when
        the question is about several repositories (a channel's subscriptions). `search`: the
        words to look for (the question without its period's words; default the question); the
        model reads the whole question."""
        trace = trace if trace is not None else Trace()
        pairs = [(targets, branch)] if not isinstance(targets, (list, tuple)) else list(targets)
        repo = ", ".join(s.name for s, _ in pairs)
        query = build_query(question if search is None else search)
        cutoff = LIST_CUTOFF if self.llm is None else CONTEXT_CUTOFF
        periods: list[tuple[object, list[Commit]]] = []
        for source, on_branch in pairs:
            commits = await self.retriever.commits(source, window, on_branch)
            trace.commits += len(commits)
            if commits:
                trace.analysed += await self.retriever.prepare(source, commits, lang, progress)
                periods.append((source, commits))
        found = await self._search(periods, window, lang, query)
        if self.llm is not None and self.settings.history_max_analyses > 0 and found:
            ranked = by_importance(found, TOP_K) if query.empty else best_of(found, TOP_K, cutoff)
            if await self._deepen(periods, ranked, lang, trace):
                found = await self._search(periods, window, lang, query)  # what is now known ranks them
        for source, commits in periods:
            trace.read += await self.retriever.read_count(source, commits, lang)
        if not trace.commits:
            yield _first(trace, text(lang, "history.no_commits", repo=repo, period=window.label, tz=window.tz))
            return
        sources = by_importance(found, TOP_K) if query.empty else best_of(found, TOP_K, cutoff)
        trace.sources = sources
        if not sources:
            yield _first(
                trace,
                text(
                    lang, "history.nothing_matches", repo=repo, period=window.label, tz=window.tz, count=trace.commits
                ),
            )
            return
        yield _first(
            trace,
            text(lang, "history.header", repo=repo, period=window.label, tz=window.tz, count=trace.commits) + "\n\n",
        )
        several = len(pairs) > 1
        if self.llm is None:
            yield text(lang, "history.offline") + "\n"
            yield self._offline(sources, lang, trace, several)
            return
        async for piece in self._llm_answer(repo, window, question, lang, history, sources, trace, several):
            yield piece

    async def _search(self, periods, window: Window, lang: str, query) -> list[Source]:
        found: list[Source] = []
        for source, commits in periods:
            found += await self.retriever.search(source, commits, window, lang, query, cutoff=0.0)
        return found

    async def _deepen(self, periods, ranked: Sequence[Source], lang: str, trace: Trace) -> int:
        """Analyse the best-ranked commits not yet analysed, at most HISTORY_MAX_ANALYSES in all."""
        left = self.settings.history_max_analyses
        for source, commits in periods:
            by_sha = {c.sha: c for c in commits}
            mine = [s.sha for s in ranked if s.sha in by_sha and (not s.repo or s.repo == source.name)]
            chosen = (await self.retriever.unread(source, mine, lang))[:left]
            if chosen:
                trace.deepened += await self.retriever.deepen(source, [by_sha[sha] for sha in chosen], lang)
                left -= len(chosen)
        return trace.deepened

    def _read_line(self, lang: str, trace: Trace) -> str:
        """One sentence saying how much was read in full, when not everything was."""
        if trace.read >= trace.commits:
            return ""
        return text(lang, "history.read", read=trace.read, count=trace.commits) + "\n"

    def _offline(self, sources: list[Source], lang: str, trace: Trace, several: bool) -> str:
        trace.cited = [s.sha for s in sources]
        return self._read_line(lang, trace) + sources_list(sources, lang, summaries=True, repos=several)

    async def _llm_answer(self, repo, window, question, lang, history, sources, trace, several) -> AsyncIterator[str]:
        fits: list[_Fitted] = []
        guard: CitationGuard | None = None

        def fit() -> _Fitted:  # fewer commits, shorter summaries each time it is rebuilt
            fits.append(
                self._prompt(repo, window, question, lang, history, sources, trace.commits, trace.read, len(fits))
            )
            return fits[-1]

        def refusal(why: str, final: bool) -> None:
            trace.refusals.append(why)
            log.info("history answer refused (%s); %s", why, "the ranked list instead" if final else "asking again")

        def again(why: str, head: str) -> list[dict[str, str]]:  # the refused answer, then the correction
            refusal(why, final=False)
            corrective = self.prompts.render(RETRY_JOB, lang, copied=why == "copy", language=language_name(lang)).user
            return [{"role": "assistant", "content": head}, {"role": "user", "content": corrective}]

        def refused(why: str) -> _RefusedTwice:
            refusal(why, final=True)
            return _RefusedTwice(why)

        # The opening is held back and judged (check.py): a copy of the sources or the wrong language.
        check = HeadCheck(
            ready=lambda head: len(head) >= JUDGE_CHARS,
            problem=lambda head: problem(head, lang, _lines(fits[-1].given, window.tz)),
            again=again,
            refused=refused,
        )
        try:
            async with aclosing(cast(AsyncGenerator[str, None], stream_fitted(self.llm, fit, check))) as pieces:
                async for piece in pieces:
                    if guard is None:  # the prompt is settled once the first piece arrives
                        guard = CitationGuard([s.sha for s in fits[-1].given], text(lang, "history.not_a_source"))
                    if out := guard.feed(piece):
                        yield out
        except _RefusedTwice as exc:
            yield text(lang, REFUSED[exc.why]) + "\n"
            yield self._offline(sources, lang, trace, several)
            return
        except BotError as exc:
            if guard is not None and (out := guard.flush()):
                yield out
            yield f"\n\n⚠️ {localize(exc, lang)}\n\n" + text(lang, "history.llm_failed") + "\n"
            yield self._offline(sources, lang, trace, several)
            return
        given = fits[-1].given
        guard = guard or CitationGuard([s.sha for s in given], text(lang, "history.not_a_source"))
        if out := guard.flush():
            yield out
        trace.cited, trace.refused = list(guard.cited), list(guard.refused)
        if guard.refused:
            log.info("history answer cited %d SHA(s) outside its sources", len(guard.refused))
        # The commits the answer cites (checked against what it was given), in the retrieval's
        # order; when it cites none, everything it was given. Each line is written from the index.
        cited = [s for s in given if s.sha in guard.cited] or given
        yield "\n\n" + (self._read_line(lang, trace) + "\n" if trace.read < trace.commits else "")
        yield sources_list(cited, lang, repos=several)

    def _prompt(
        self, repo: str, window, question, lang, history, sources: list[Source], count: int, read: int, rebuilt: int
    ) -> _Fitted:
        """The prompt that fits the endpoint's window as now known: the first of FIT_STEPS (from
        the `rebuilt`-th on: a refused prompt is not built the same way again) that fits."""
        output = min(OUTPUT_TOKENS, self.llm.max_output_tokens)
        limit = self.llm.prompt_budget(output)
        turns = [
            {"role": getattr(t, "role", "user"), "text": _untrusted(getattr(t, "text", ""))}
            for t in list(history)[-2 * HISTORY_TURNS :]
        ]
        steps = FIT_STEPS[min(rebuilt, len(FIT_STEPS) - 1) :]
        for given_count, chars in steps:
            given = sources[:given_count]
            prompt = self.prompts.render(
                JOB,
                lang,
                repo=repo,
                period=window.label,
                tz=window.tz,
                count=count,
                read=read,
                example_sha=given[0].short_sha,
                commits=[_commit_vars(s, chars, window.tz) for s in given],
                history=turns,
                question=_untrusted(question),
            )
            if estimate_tokens(prompt.system) + estimate_tokens(prompt.user) + PROMPT_MARGIN_TOKENS <= limit:
                break
            turns = turns[-2:]  # the commits matter more than old turns
        return _Fitted(prompt, given, output)


@dataclass(frozen=True)
class _Fitted:
    prompt: object  # RenderedPrompt
    given: list[Source]  # the commits the model was given (the Sources list)
    output: int


class _RefusedTwice(Exception):
    """The answer was refused, and so was the corrective retry: the ranked list is given instead."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def _lines(given: Sequence[Source], tz: str) -> list[str]:
    """The sources' lines as the prompt shows them (what a copying answer repeats)."""
    return [
        f"[{v['short_sha']}] {v['date']} · {v['change_type']} · {v['importance']} · {v['title']}\n{v['summary']}"
        for v in (_commit_vars(s, 400, tz) for s in given)
    ]


def sources_list(sources: Sequence[Source], lang: str, summaries: bool = False, repos: bool = False) -> str:
    """**Sources**, then one line per commit: short SHA, title, link (and its summary offline;
    its repository when the answer draws on several)."""
    lines = [text(lang, "history.sources")]
    for s in sources:
        line = f"• `{s.short_sha}` " + (f"{s.repo} · " if repos and s.repo else "") + _one_line(s.title, 120)
        if summaries and s.summary:
            line += f" — {_one_line(s.summary, SUMMARY_LINE_CHARS)}"
        if s.url:
            line += f" — {s.url}"
        lines.append(line)
    return "\n".join(lines)


def _first(trace: Trace, piece: str) -> str:
    if trace.first_piece_at is None:
        trace.first_piece_at = time.monotonic()
    return piece


def _commit_vars(s: Source, chars: int, tz: str) -> dict:
    day = datetime.fromtimestamp(s.committed_at, UTC).astimezone(ZoneInfo(tz)).date().isoformat()
    return {
        "short_sha": s.short_sha,
        "date": day,
        "change_type": s.change_type,
        "importance": s.importance,
        "title": _untrusted(_one_line(s.title, 200)),
        "summary": _untrusted(_one_line(s.summary, chars)) if chars else "",
    }


def _one_line(value: str, chars: int) -> str:
    value = " ".join((value or "").split())
    return value if len(value) <= chars else value[: chars - 1].rstrip() + "…"


def _untrusted(value: str) -> str:
    """Commit text, chat text and earlier answers: secrets redacted, block tags defused."""
    return neutralise(redact_text(value or ""))

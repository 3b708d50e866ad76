"""Answer a question about one commit: its analysis + its re-read diff (within the budget, from
the cache when possible) + the thread's earlier turns → the LLM, streamed. Offline: the hunks
most relevant to the question, saying that no LLM is configured.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import AsyncIterator, Sequence

from .diffs import coverage_line, estimate_tokens, relevant_hunks, select_diff
from .i18n import localize, text
from .models import Analysis, BotError, Commit, to_dict
from .redact import record as record_redactions, redact, redact_text

MAX_QUESTION_CHARS = 2000
HISTORY_TURNS = 10  # earlier turns (question + answer each) kept in the prompt
_OUTPUT_TOKENS = 1500


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str


def qa_text(lang: str, key: str, **values) -> str:
    return text(lang, f"qa.{key}", **values)


def check_question(question: str, lang: str) -> str:
    """The question, stripped; a UsageError sentence when it cannot be asked."""
    from .models import UsageError

    q = (question or "").strip()
    if not q:
        raise UsageError(qa_text(lang, "empty_question"))
    if len(q) > MAX_QUESTION_CHARS:
        raise UsageError(qa_text(lang, "too_long", n=len(q), limit=MAX_QUESTION_CHARS))
    return q


class QA:
    def __init__(self, builder, llm, prompts, settings):
        self.builder = builder
        self.llm = llm
        self.prompts = prompts
        self.settings = settings

    async def answer(self, source, commit: Commit, question: str, lang: str,
                     history: Sequence[Turn] = ()) -> AsyncIterator[str]:
        """Yield the answer in pieces as they are produced."""
        question = check_question(question, lang)
        files = await self.builder.files(source, commit.sha)
        if self.llm is None:
            async for piece in self._offline(commit, files, question, lang):
                yield piece
            return
        analysis = await self.builder.analysis(source, commit, lang)
        from .analysis.llm import ContextLengthError

        # Only the output an answer needs, and never more than the model's window leaves.
        output = min(_OUTPUT_TOKENS, self.llm.max_output_tokens)
        prompt, shown = self._prompt(commit, analysis, files, question, lang, history, output)
        started = False
        try:
            try:
                async for piece in self.llm.stream(prompt.messages(), max_tokens=output):
                    started = True
                    yield piece
            except ContextLengthError:
                if started:
                    raise
                # The endpoint said how big its window is (the estimate is corrected): shrink once.
                output = min(_OUTPUT_TOKENS, self.llm.max_output_tokens)
                prompt, shown = self._prompt(commit, analysis, files, question, lang, history, output)
                async for piece in self.llm.stream(prompt.messages(), max_tokens=output):
                    yield piece
        except BotError as exc:
            yield f"\n\n⚠️ {localize(exc, lang)}\n\n"
            async for piece in self._offline(commit, files, question, lang, "llm_failed"):
                yield piece
            return
        if shown:
            yield "\n\n" + qa_text(lang, "files", files=", ".join(shown[:8]) + (" …" if len(shown) > 8 else ""))

    def _prompt(self, commit, analysis: Analysis, files, question, lang, history, output: int):
        history = list(history)[-2 * HISTORY_TURNS:]
        base = dict(commit=_commit_vars(commit), analysis=_untrusted_tree(to_dict(analysis)),
                    question=_untrusted(question),
                    history=[{"role": h.role, "text": _untrusted(h.text)} for h in history], coverage="")
        overhead = estimate_tokens("\n".join(m["content"] for m in
                                             self.prompts.render("qa", lang, diff="", **base).messages()))
        budget = max(500, self.llm.prompt_limit(output) - overhead - 200)
        selection = select_diff(files, budget)
        if not selection.coverage.complete:
            selection = relevant_hunks(files, question, budget)  # the whole diff won't fit: focus
        base["coverage"] = redact_text(coverage_line(selection.coverage, lang))  # it names files
        left_out = {path for path, _ in selection.coverage.omitted}
        # Provenance: name only the files whose text the model was given.
        shown = [f.path for f in files if f.path not in left_out and f.path in selection.text]
        withheld = Counter(dict(selection.kinds))
        for piece in (question, commit.title, commit.body, *(h.text for h in history if h.role == "user")):
            withheld.update(redact(piece).kinds)
        record_redactions(withheld)
        return self.prompts.render("qa", lang, diff=neutralise(selection.text), **base), shown

    async def _offline(self, commit, files, question, lang, why: str = "offline") -> AsyncIterator[str]:
        yield qa_text(lang, why, sha=commit.short_sha) + "\n\n"
        selection = relevant_hunks(files, question, 3000)
        if not selection.text.strip():
            yield qa_text(lang, "no_hunks")
            return
        yield "```diff\n" + selection.text.replace("```", "ʼʼʼ").rstrip() + "\n```"


def _commit_vars(commit: Commit) -> dict:
    return {"sha": commit.sha, "title": _untrusted(commit.title), "body": _untrusted(commit.body),
            "author": _untrusted(commit.author), "url": commit.url or "", "pr_number": commit.pr_number}


def _untrusted(text: str) -> str:
    """Chat text, commit text and earlier answers: secrets redacted, block tags defused."""
    return neutralise(redact_text(text))


def _untrusted_tree(value):
    if isinstance(value, str):
        return _untrusted(value)
    if isinstance(value, dict):
        return {k: _untrusted_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untrusted_tree(v) for v in value]
    return value


def neutralise(text: str) -> str:
    """Untrusted text sits between <data> tags in the prompt; it must not be able to close them."""
    return text.replace("</data", "<\u200b/data").replace("<data", "<\u200bdata")

"""Answer a question about one commit: its analysis + its re-read diff (within the budget, from
the cache when possible) + the thread's earlier turns → the LLM, streamed. Offline: the hunks
most relevant to the question, saying that no LLM is configured.

The prompt is built to fit the endpoint's window (known from the setting, an earlier process or a
context-length error): the commit message (a Renovate body with release notes runs to 30 KB),
the earlier turns and the analysis are clipped step by step until the diff has room, and the
diff holds the hunks most relevant to the question when it cannot hold all. A context-length
error rebuilds the prompt with the corrected estimate and asks once more. Under the answer, the
reader is told what of the diff the model was given when it was not all of it.

Without an LLM (or when it fails) the answer is the diff's blocks that match the question's terms
(`diffs.relevant.answer_hunks`: code before tests, a few dozen lines); when none does, the
commit's main code changes, said as such.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from settings import Settings

from ..analysis.language import asked_in, prose_counts, wrong_language
from ..analysis.prompt_text import strip_bot_footers
from ..core.models import Analysis, BotError, Commit, to_dict
from ..core.prompts import RenderedPrompt
from ..diffs.packing import DiffSelection, select_diff
from ..diffs.reader import coverage_line, for_reader
from ..diffs.relevant import answer_hunks, relevant_hunks
from ..diffs.tokens import estimate_tokens
from ..i18n import localize, text
from ..redact import record as record_redactions
from ..redact import redact, redact_text
from .question import Turn, check_question, qa_text

HISTORY_TURNS = 10  # earlier turns (question + answer each) kept in the prompt
# The output kept free for the answer (a few hundred words, some code), and the most asked for
# when the window leaves more.
OUTPUT_TOKENS = 1024
MAX_OUTPUT_TOKENS = 1500
PROMPT_MARGIN_TOKENS = 200
# How the prompt shrinks to leave the diff room: (commit message share of the prompt budget,
# earlier turns kept, chars per turn, chars per analysis text). A step is taken when the diff
# fits whole or has at least DIFF_SHARE of the budget; else the next, smaller one.
FIT_STEPS = ((0.25, HISTORY_TURNS, 4000, 1500), (0.12, 6, 1500, 600), (0.06, 2, 600, 300), (0.02, 0, 0, 200))
DIFF_SHARE = 0.5
CHARS_PER_TOKEN = 3.5  # to clip the message to its share before estimating it (English prose)
OVER_BUDGET = "over budget"
OFFLINE_TOKENS = 3000  # at most this much of the diff in an answer without the LLM (answer_hunks caps its lines)


class QA:
    def __init__(self, builder, llm, prompts, settings: Settings):
        self.builder = builder
        self.llm = llm
        self.prompts = prompts
        self.settings = settings

    async def answer(
        self, source, commit: Commit, question: str, lang: str, history: Sequence[Turn] = ()
    ) -> AsyncIterator[str]:
        """Yield the answer in pieces as they are produced."""
        question = check_question(question, lang)
        files = await self.builder.files(source, commit.sha)
        if self.llm is None:
            async for piece in self._offline(commit, files, question, lang):
                yield piece
            return
        analysis = await self.builder.analysis(source, commit, lang)
        fits: list[_Fitted] = []

        def fit() -> _Fitted:  # a shorter message, fewer turns, fewer hunks each time it is rebuilt
            fits.append(self._prompt(commit, analysis, files, question, lang, history))
            return fits[-1]

        try:
            async for piece in stream_fitted(self.llm, fit, in_language(lang, self.prompts, question)):
                yield piece
        except BotError as exc:
            yield f"\n\n⚠️ {localize(exc, lang)}\n\n"
            async for piece in self._offline(commit, files, question, lang, "llm_failed"):
                yield piece
            return
        fitted = fits[-1]
        shown = fitted.shown
        if shown:
            yield "\n\n" + qa_text(lang, "files", files=", ".join(shown[:8]) + (" …" if len(shown) > 8 else ""))
        if note := self._coverage_note(fitted.selection, lang):
            yield ("\n" if shown else "\n\n") + note

    def _prompt(self, commit, analysis: Analysis, files, question, lang, history) -> _Fitted:
        """The prompt that fits the endpoint's window as now known: the first of FIT_STEPS that
        leaves the diff its room (the last takes what is left), then as much of the diff as fits —
        all of it, or the hunks most relevant to the question."""
        output = min(MAX_OUTPUT_TOKENS, self.llm.max_output_tokens)
        limit = self.llm.prompt_budget(min(OUTPUT_TOKENS, output))
        whole = select_diff(files, limit).tokens  # what the diff costs when nothing else is there
        for step, (body_share, turns, turn_chars, analysis_chars) in enumerate(FIT_STEPS):
            kept = list(history)[-2 * turns :] if turns else []
            base = dict(
                commit=_commit_vars(commit, int(body_share * limit * CHARS_PER_TOKEN)),
                analysis=_untrusted_tree(to_dict(analysis), analysis_chars),
                question=_untrusted(question),
                history=[{"role": h.role, "text": _untrusted(_clip(h.text, turn_chars))} for h in kept],
                coverage="",
            )
            overhead = _tokens(self.prompts.render("qa", lang, diff="", **base))
            budget = max(limit - overhead - PROMPT_MARGIN_TOKENS, 0)
            if budget >= min(whole, DIFF_SHARE * limit) or step == len(FIT_STEPS) - 1:
                break
        selection = select_diff(files, budget)
        if _cut(selection):
            selection = relevant_hunks(files, question, budget)  # the whole diff won't fit: focus
        base["coverage"] = redact_text(coverage_line(selection.coverage, lang))  # it names files
        left_out = {path for path, _ in selection.coverage.omitted}
        # Provenance: name only the files whose text the model was given.
        shown = [f.path for f in files if f.path not in left_out and f.path in selection.text]
        withheld = Counter(dict(selection.kinds))
        for piece in (question, commit.title, commit.body, *(h.text for h in kept if h.role == "user")):
            withheld.update(redact(piece).kinds)
        record_redactions(withheld)
        prompt = self.prompts.render("qa", lang, diff=neutralise(selection.text), **base)
        # Ask for what the answer may use: at most MAX_OUTPUT_TOKENS, at most what the prompt leaves.
        return _Fitted(prompt, shown, selection, output)

    def _coverage_note(self, selection: DiffSelection, lang: str) -> str:
        """What of the diff the model was given, when not all of it; naming the window when the
        window is what cut it."""
        coverage = selection.coverage
        if coverage.complete:
            return ""
        line = redact_text(coverage_line(coverage, lang))
        if _cut(selection) and self.llm.context_tokens:
            return text(lang, "qa_fit.window", window=f"{self.llm.context_tokens:,}", coverage=line)
        return text(lang, "qa_fit.coverage", coverage=line)

    async def _offline(self, commit, files, question, lang, why: str = "offline") -> AsyncIterator[str]:
        answered = answer_hunks(files, question, OFFLINE_TOKENS)
        selection = answered.selection
        if answered.matched or not answered.blocks:
            yield qa_text(lang, why, sha=commit.short_sha) + "\n\n"
        else:  # nothing in the diff names what was asked: say what is shown instead
            yield qa_text(lang, f"{why}_unmatched", sha=commit.short_sha) + "\n"
            if answered.all_new:
                yield qa_text(lang, "all_new", n=answered.all_new) + "\n"
            yield "\n"
        if not selection.text.strip():
            yield qa_text(lang, "no_hunks")
            return
        shown = for_reader(selection.text, lang)  # its markers in the reader's words (the model's stay English)
        yield "```diff\n" + shown.replace("```", "ʼʼʼ").rstrip() + "\n```"


async def stream_fitted(llm, fit: Callable[[], Any], check: HeadCheck | None = None) -> AsyncIterator[str]:
    """The model's streamed answer to the prompt `fit()` builds (an object with `.prompt` and
    `.output`, the max_tokens to ask for). When the endpoint refuses it as too long before the
    first piece, its window is now known (the estimate is corrected): `fit()` builds the prompt
    again and it is asked once more, at most CONTEXT_RETRIES times. Questions about one commit
    and about a period (bot/period_questions/) stream through here.

    With a `check`, the answer's opening is held back and judged before anything of it is shown
    (`HeadCheck`): a refused opening is dropped unseen and the model asked once more, with
    `check.again` added to the prompt's messages; when that one is refused too, `check.refused`
    is raised. Commit answers are checked for their language (`in_language`), period answers for
    their language and for copying their sources (bot/period_questions/answer.py)."""
    from ..analysis.llm.endpoint import CONTEXT_RETRIES
    from ..analysis.llm.responses import ContextLengthError

    await llm.recall()  # the window an earlier process learnt, before sizing the prompt
    fitted = fit()
    corrective: list[dict[str, str]] = []
    for refused in range(CONTEXT_RETRIES + 2):
        started = False
        try:
            pieces = llm.stream(fitted.prompt.messages() + corrective, max_tokens=fitted.output)
            if check is not None:
                pieces = _held_back(pieces, check)
            async for piece in pieces:
                started = True
                yield piece
            return
        except ContextLengthError:
            if started or refused >= CONTEXT_RETRIES:
                raise
            fitted = fit()
        except _HeadRefused as exc:
            assert check is not None  # only _held_back raises it
            if corrective:
                raise check.refused(exc.why) from None
            corrective = check.again(exc.why, exc.head)


@dataclass(frozen=True)
class HeadCheck:
    """What the opening of a streamed answer must pass before anything of it is shown. It is held
    back until `ready(head)` (or the answer ends), then `problem(head)` says why it is refused ("" when
    it may be shown); the rest streams as it comes, unjudged. A refused answer is closed unseen
    and asked again once with `again(why, head)` added to the prompt's messages (a corrective
    message, and the refused head when the model should see what it wrote); refused again, the
    exception `refused(why)` returns is raised."""

    ready: Callable[[str], bool]
    problem: Callable[[str], str]
    again: Callable[[str, str], list[dict[str, str]]]
    refused: Callable[[str], Exception]


class _HeadRefused(Exception):
    """The streamed answer's opening did not pass its check (nothing was shown)."""

    def __init__(self, why: str, head: str):
        super().__init__(why)
        self.why, self.head = why, head


async def _held_back(pieces: AsyncIterator[str], check: HeadCheck) -> AsyncIterator[str]:
    """`pieces` once their opening passes `check` (raising _HeadRefused, with the stream closed and
    nothing shown, when it does not)."""
    held: list[str] = []
    judged = False
    try:
        async for piece in pieces:
            if judged:
                yield piece
                continue
            held.append(piece)
            head = "".join(held)
            if check.ready(head):
                judged = True
                if why := check.problem(head):
                    raise _HeadRefused(why, head)
                yield head
        if not judged and held:  # an answer shorter than the opening: judged whole
            head = "".join(held)
            if why := check.problem(head):
                raise _HeadRefused(why, head)
            yield head
    finally:
        await pieces.aclose()  # type: ignore[attr-defined]  # frees the concurrency slot at once


# An answer's opening is held back until its language can be judged: JUDGE_WORDS words of prose
# (a Chinese character is one), or JUDGE_CHARS characters, whichever comes first.
JUDGE_WORDS = 6
JUDGE_CHARS = 160


class WrongLanguage(BotError):
    """The model answered in another language twice; the message says so in the reader's."""

    def __init__(self, lang: str):
        super().__init__(text(lang, "qa.wrong_language"))
        self.lang = lang


def in_language(lang: str, prompts, question: str = "") -> HeadCheck | None:
    """The check of a commit answer: in `lang`, or in the language the `question` was asked in.
    Judged once the opening holds JUDGE_WORDS words or JUDGE_CHARS characters; one in another
    language is asked again with a message saying which (prompts/language_retry.*.j2), and a
    second one raises WrongLanguage, which the caller shows as a visible fallback. None (nothing
    held back) without a language."""
    if not lang:
        return None
    asked = asked_in(question)

    def ready(head: str) -> bool:
        return len(head) >= JUDGE_CHARS or sum(prose_counts(head)) >= JUDGE_WORDS

    def problem(head: str) -> str:
        wrong = wrong_language(head, lang) and (asked in (None, lang) or wrong_language(head, asked))
        return "language" if wrong else ""

    def again(why: str, head: str) -> list[dict[str, str]]:
        wanted = text(lang, "qa.language_name")
        return [{"role": "user", "content": prompts.render("language_retry", lang, wanted=wanted).user}]

    return HeadCheck(ready, problem, again, refused=lambda why: WrongLanguage(lang))


@dataclass(frozen=True)
class _Fitted:
    prompt: RenderedPrompt
    shown: list[str]  # the files whose text the model was given
    selection: DiffSelection
    output: int  # max_tokens to ask for


def _commit_vars(commit: Commit, body_chars: int) -> dict:

    body = _clip(strip_bot_footers(commit.body), body_chars)  # a Renovate body is mostly boilerplate
    return {
        "sha": commit.sha,
        "title": _untrusted(commit.title),
        "body": _untrusted(body),
        "author": _untrusted(commit.author),
        "url": commit.url or "",
        "pr_number": commit.pr_number,
    }


def _cut(selection: DiffSelection) -> bool:
    """True when the budget, not a rule (lockfile, binary …), kept part of the diff out."""
    coverage = selection.coverage
    return bool(coverage.partial) or any(reason == OVER_BUDGET for _, reason in coverage.omitted)


def _clip(value: str, chars: int) -> str:
    value = (value or "").strip()
    if len(value) <= chars:
        return value
    return value[: max(chars - 1, 0)].rstrip() + "…" if chars else ""


def _tokens(prompt) -> int:
    return estimate_tokens(prompt.system) + estimate_tokens(prompt.user)


def _untrusted(value: str) -> str:
    """Chat text, commit text and earlier answers: secrets redacted, block tags defused."""
    return neutralise(redact_text(value))


def _untrusted_tree(value, chars: int | None = None):
    if isinstance(value, str):
        return _untrusted(_clip(value, chars) if chars is not None else value)
    if isinstance(value, dict):
        return {k: _untrusted_tree(v, chars) for k, v in value.items()}
    if isinstance(value, list):
        return [_untrusted_tree(v, chars) for v in value]
    return value


def neutralise(text: str) -> str:
    """Untrusted text sits between <data> tags in the prompt; it must not be able to close them."""
    return text.replace("</data", "<\u200b/data").replace("<data", "<\u200bdata")
